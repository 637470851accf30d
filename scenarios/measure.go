package scenarios

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// heapObjectsMetric is the live heap (plus unswept dead objects, none right
// after runtime.GC, which sweeps before returning).
const heapObjectsMetric = "/memory/classes/heap/objects:bytes"

// liveHeapBytes reads the bytes occupied by heap objects.
func liveHeapBytes() (int64, error) {
	s := []metrics.Sample{{Name: heapObjectsMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0, fmt.Errorf("runtime/metrics: %s is not supported", heapObjectsMetric)
	}
	return int64(s[0].Value.Uint64()), nil
}

// readRSS reads the process's resident set size from /proc/self/status.
func readRSS() (int64, error) { return readProcStatus("VmRSS:") }

// readProcStatus reads a "kB" field of /proc/self/status, such as "VmRSS:"
// or "VmHWM:" (peak RSS), in bytes.
func readProcStatus(field string) (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("reading RSS: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), field)
		if !ok {
			continue
		}
		num, ok := strings.CutSuffix(strings.TrimSpace(rest), " kB")
		if !ok {
			break
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
		if err != nil {
			break
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("/proc/self/status has no readable %s line", field)
}

// inuseAt parses a pprof heap profile and returns the inuse_space of the
// samples whose stack contains the function fn.
func inuseAt(data []byte, fn string) (int64, error) {
	p, err := profile.ParseData(data)
	if err != nil {
		return 0, fmt.Errorf("parsing heap profile: %w", err)
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "inuse_space" {
			idx = i
		}
	}
	if idx < 0 {
		return 0, fmt.Errorf("heap profile has no inuse_space samples")
	}
	var total int64
	for _, s := range p.Sample {
		if stackHas(s, fn) {
			total += s.Value[idx]
		}
	}
	return total, nil
}

func stackHas(s *profile.Sample, fn string) bool {
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			if line.Function != nil && line.Function.Name == fn {
				return true
			}
		}
	}
	return false
}
