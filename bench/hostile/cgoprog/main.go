// Command cgoprog is a cgo executable for bench/hostile: ctxleak holders
// must refuse it as the --binary of a dump another program wrote.
package main

// int answer(void) { return 42; }
import "C"

import "fmt"

func main() { fmt.Println(C.answer()) }
