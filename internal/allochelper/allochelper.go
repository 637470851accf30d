// Package allochelper lists the functions that allocate on behalf of their
// caller: the runtime, reflect's allocating entry points, growing buffers,
// formatting. Heap reports and profile reports both skip them to find the
// allocation site a user can act on.
package allochelper

import "strings"

// Names lists the functions that allocate on behalf of their
// caller, so that the caller, not they, is the allocation site. An entry
// ending in "." or "/" is a prefix (every function of a package, or of a
// type's methods); any other entry is a whole function name. Type
// parameters of generic functions are ignored when matching.
var Names = []string{
	// The runtime: mallocgc, newobject, makeslice, growslice, makemap,
	// mapassign, concatstrings, slicebytetostring, and the map internals.
	"runtime.", "internal/runtime/", "internal/abi.", "internal/bytealg.",
	// reflect's allocating entry points.
	"reflect.unsafe_New", "reflect.unsafe_NewArray", "reflect.New", "reflect.Zero",
	"reflect.MakeSlice", "reflect.MakeMap", "reflect.MakeMapWithSize", "reflect.MakeChan",
	"reflect.Append", "reflect.AppendSlice", "reflect.growslice", "reflect.Value.Grow",
	"reflect.Value.grow", "reflect.Value.SetMapIndex", "reflect.mapassign",
	"reflect.mapassign_faststr", "reflect.copyVal", "reflect.packEface",
	// Buffers and builders that grow.
	"bytes.growSlice", "bytes.(*Buffer).grow", "bytes.(*Buffer).Grow", "bytes.(*Buffer).Write",
	"bytes.(*Buffer).WriteString", "bytes.(*Buffer).WriteByte", "bytes.(*Buffer).WriteRune",
	"bytes.(*Buffer).ReadFrom", "bytes.NewBuffer", "bytes.NewBufferString", "bytes.Clone",
	"bytes.Repeat", "bytes.Join",
	"strings.(*Builder).grow", "strings.(*Builder).Grow", "strings.(*Builder).Write",
	"strings.(*Builder).WriteString", "strings.(*Builder).WriteByte",
	"strings.(*Builder).WriteRune", "strings.Clone", "strings.Repeat", "strings.Join",
	"strings.genSplit", "strings.Split", "strings.SplitN", "strings.SplitAfter",
	"strings.SplitAfterN", "strings.Fields", "strings.ToLower", "strings.ToUpper",
	"strings.Replace", "strings.ReplaceAll",
	// Readers that allocate what they return.
	"io.ReadAll", "io.Copy", "io.CopyN", "io.CopyBuffer", "io.copyBuffer", "os.ReadFile",
	"bufio.NewReader", "bufio.NewReaderSize", "bufio.NewWriter", "bufio.NewWriterSize",
	"bufio.(*Scanner).Scan",
	// Formatting and errors.
	"fmt.Sprintf", "fmt.Sprint", "fmt.Sprintln", "fmt.Errorf", "fmt.Appendf", "fmt.Append",
	"fmt.Appendln", "fmt.newPrinter", "fmt.(*buffer).write", "fmt.(*buffer).writeString",
	"fmt.(*buffer).writeByte", "fmt.(*buffer).writeRune", "errors.New", "errors.Join",
	"strconv.",
	// Generic containers and contexts: the caller decides what they hold.
	"slices.", "maps.", "context.", "sync.(*Pool).",
}

var (
	helperExact    = map[string]bool{}
	helperPrefixes []string
)

func init() {
	for _, h := range Names {
		if strings.HasSuffix(h, ".") || strings.HasSuffix(h, "/") {
			helperPrefixes = append(helperPrefixes, h)
		} else {
			helperExact[h] = true
		}
	}
}

// Is reports whether function is in Names: the runtime or a
// function that allocates on behalf of its caller.
func Is(function string) bool {
	name := stripTypeArgs(function)
	if helperExact[name] {
		return true
	}
	for _, p := range helperPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// stripTypeArgs removes the "[...]" of generic function names:
// "slices.Grow[go.shape.[]uint8,go.shape.uint8]" becomes "slices.Grow".
func stripTypeArgs(name string) string {
	i := strings.IndexByte(name, '[')
	if i < 0 {
		return name
	}
	j := strings.LastIndexByte(name, ']')
	if j < i {
		return name
	}
	return name[:i] + name[j+1:]
}
