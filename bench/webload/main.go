// Command webload measures the web view of "ctxleak holders --http" over
// real HTTP: it starts ctxleak on a dump, waits for the URL it prints (the
// analysis has finished), then times the first page, the other pages, and
// the expansion of dominator tree nodes (/api/children), breadth first from
// the top plus the widest node met and its next pages, and an object's page
// with its paths from the roots. bench/web.sh runs it on the benchmark dump.
//
// Usage: webload -ctxleak BIN -dump FILE -binary EXE [-expand N]
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "webload:", err)
		os.Exit(1)
	}
}

// get fetches url and returns its body and how long the answer took.
func get(url string) ([]byte, time.Duration, error) {
	start := time.Now()
	resp, err := http.Get(url)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	d := time.Since(start)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("GET %s: %s: %.200s", url, resp.Status, b)
	}
	return b, d, err
}

type children struct {
	Total    int `json:"child_count"`
	Next     int `json:"next_offset"`
	Children []struct {
		ID       int    `json:"id"`
		Label    string `json:"label"`
		Children int    `json:"child_count"`
	} `json:"children"`
}

func ms(d time.Duration) string { return strconv.FormatFloat(d.Seconds()*1000, 'f', 1, 64) + " ms" }

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func run() error {
	ctxleak := flag.String("ctxleak", "ctxleak", "the ctxleak executable")
	dump := flag.String("dump", "", "the heap dump")
	binary := flag.String("binary", "", "the executable that wrote it")
	expand := flag.Int("expand", 200, "how many nodes to expand, breadth first")
	flag.Parse()
	if *dump == "" || *binary == "" {
		return errors.New("usage: webload -ctxleak BIN -dump FILE -binary EXE [-expand N]")
	}
	fmt.Printf("load average before: %s\n", loadavg())
	cmd := exec.Command(*ctxleak, "holders", *dump, "--binary", *binary, "--http", "127.0.0.1:0", "--no-browser")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return fmt.Errorf("reading the URL: %v", err)
	}
	ready := time.Now()
	base := regexp.MustCompile(`http://\S+/`).FindString(line)
	if base == "" {
		return fmt.Errorf("no URL in %q", line)
	}
	fmt.Printf("analysis (start to URL printed): %.2f s\n", ready.Sub(start).Seconds())

	_, d, err := get(base)
	if err != nil {
		return err
	}
	fmt.Printf("first page (/, groups, builds the report) answered %s after the URL was printed (request %s)\n", ms(time.Since(ready)), ms(d))
	for _, p := range []string{"", "tree", "roots", "treemap"} {
		_, d, err := get(base + p)
		if err != nil {
			return err
		}
		fmt.Printf("page /%-8s %s\n", p, ms(d))
	}

	// The top of the tree: the super-root is the parent of the tree page's
	// list.
	b, d, err := get(base + "tree")
	if err != nil {
		return err
	}
	fmt.Printf("page /tree again: %s\n", ms(d))
	m := regexp.MustCompile(`data-parent="(\d+)"`).FindSubmatch(b)
	if m == nil {
		return errors.New("no tree on /tree")
	}
	queue := []int{}
	sr, _ := strconv.Atoi(string(m[1]))
	queue = append(queue, sr)
	var times []time.Duration
	widest, widestN := -1, 0
	var slowest time.Duration
	slowestLabel := ""
	labels := map[int]string{sr: "all roots"}
	for head := 0; head < len(queue) && len(times) < *expand; head++ {
		id := queue[head]
		b, d, err := get(base + "api/children/" + strconv.Itoa(id))
		if err != nil {
			return err
		}
		times = append(times, d)
		if d > slowest {
			slowest, slowestLabel = d, labels[id]
		}
		var c children
		if err := json.Unmarshal(b, &c); err != nil {
			return err
		}
		if c.Total > widestN {
			widest, widestN = id, c.Total
		}
		for _, k := range c.Children {
			if k.Children > 0 {
				queue = append(queue, k.ID)
				labels[k.ID] = k.Label
			}
		}
	}
	slices.Sort(times)
	fmt.Printf("node expansions (GET /api/children/ID, 200 children each, breadth first): %d, median %s, p90 %s, max %s (%s)\n",
		len(times), ms(times[len(times)/2]), ms(times[len(times)*9/10]), ms(times[len(times)-1]), slowestLabel)
	for _, off := range []int{200, 400, 10000} {
		if off >= widestN {
			break
		}
		_, d, err := get(base + "api/children/" + strconv.Itoa(widest) + "?offset=" + strconv.Itoa(off))
		if err != nil {
			return err
		}
		fmt.Printf("widest node (%s, %d children), page at offset %d: %s\n", labels[widest], widestN, off, ms(d))
	}

	// An object's page: who holds the first group's object.
	b, _, err = get(base + "api/report")
	if err != nil {
		return err
	}
	var rep struct {
		Groups []struct {
			Object struct{ Addr string } `json:"object"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return err
	}
	for i, g := range rep.Groups {
		if i == 2 {
			break
		}
		for k := range 2 {
			_, d, err := get(base + "api/object/" + g.Object.Addr)
			if err != nil {
				return err
			}
			fmt.Printf("object page of group %d (%s), request %d: %s\n", i+1, g.Object.Addr, k+1, ms(d))
		}
	}

	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)); err == nil {
		if m := regexp.MustCompile(`VmHWM:\s*(\d+) kB`).FindSubmatch(b); m != nil {
			kb, _ := strconv.Atoi(string(m[1]))
			fmt.Printf("ctxleak peak RSS after these requests: %d MiB\n", kb/1024)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		return err
	}
	cmd.Wait()
	fmt.Printf("exit status after SIGINT: %d\n", cmd.ProcessState.ExitCode())
	fmt.Printf("load average after: %s\n", loadavg())
	return nil
}
