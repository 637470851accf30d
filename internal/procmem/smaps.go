package procmem

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// Mapping returns the value of the field key (such as "Rss" or "VmFlags")
// of the mapping of this process that holds addr, as smaps writes it
// after "key:", trimmed. found is false when no mapping holds addr; err
// is set when smaps cannot be read (not Linux).
func Mapping(addr uintptr, key string) (value string, found bool, err error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			in = lo <= addr && addr < hi
			continue
		}
		if rest, ok := strings.CutPrefix(line, key+":"); ok && in {
			return strings.TrimSpace(rest), true, nil
		}
	}
	return "", false, sc.Err()
}
