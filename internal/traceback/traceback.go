// Package traceback reads the running process's traceback of all
// goroutines (runtime.Stack) and its goroutine headers, where Go 1.27
// marks the goroutines its goroutineleak profile proved leaked:
// "goroutine 21 [chan send (leaked), 3 minutes]:".
package traceback

import (
	"runtime"
	"strconv"
	"strings"
)

// All returns runtime.Stack of all goroutines, at most max bytes, and
// whether it was cut there.
func All(max int) ([]byte, bool) {
	for size := 1 << 20; ; size *= 4 {
		buf := make([]byte, min(size, max))
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= max {
			return buf[:n], n == len(buf)
		}
	}
}

// Header parses a goroutine header line, "goroutine 21 [chan send
// (leaked), 3 minutes]:" (with " gp=... m=..." after the id at high
// traceback levels): the id, the wait reason without its marks, and
// whether the runtime marked the goroutine leaked. ok is false for a line
// of another shape.
func Header(s string) (id uint64, wait string, leaked, ok bool) {
	rest, ok := strings.CutPrefix(s, "goroutine ")
	if !ok || !strings.HasSuffix(rest, "]:") {
		return 0, "", false, false
	}
	i := strings.IndexByte(rest, '[')
	if i < 0 {
		return 0, "", false, false
	}
	idText, _, _ := strings.Cut(rest[:i], " ")
	id, err := strconv.ParseUint(idText, 10, 64)
	if err != nil {
		return 0, "", false, false
	}
	status, _, _ := strings.Cut(rest[i+1:len(rest)-2], ", ")
	wait, leaked = strings.CutSuffix(status, " (leaked)")
	return id, wait, leaked, true
}
