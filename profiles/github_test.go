package profiles

import (
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
)

func TestGitHubEscaping(t *testing.T) {
	if got, want := escapeData("50% done\r\nnext"), "50%25 done%0D%0Anext"; got != want {
		t.Errorf("escapeData = %q, want %q", got, want)
	}
	if got, want := escapeProperty("C:\\a,b%\n"), "C%3A\\a%2Cb%25%0A"; got != want {
		t.Errorf("escapeProperty = %q, want %q", got, want)
	}
}

// Annotations point at the user's code only: not the standard library,
// not the module cache, and under the workspace when there is one.
func TestInModule(t *testing.T) {
	for _, tt := range []struct {
		fn, file, workspace string
		want                bool
	}{
		{"main.(*Server).handleUpload", "/home/ci/work/shop/shop/upload.go", "", true},
		{"main.(*Server).handleUpload", "/home/ci/work/shop/shop/upload.go", "/home/ci/work/shop/shop", true},
		{"main.(*Server).handleUpload", "/home/ci/work/shop/shop/upload.go", "/elsewhere", false},
		{"shop.F", "/home/ci/work/shop/shop/f.go", "", true},
		{"example.com/shop/order.decode", "/w/order/decode.go", "", true},
		{"runtime.malg", "/usr/local/go/src/runtime/proc.go", "", false},
		{"net/http.newBufioReader", "/usr/local/go/src/net/http/server.go", "", false},
		{"net/http.newBufioReader", "/usr/local/go/src/net/http/server.go", "/usr/local/go", false},
		{"github.com/lib/pq.(*conn).recv", "/root/go/pkg/mod/github.com/lib/pq@v1.10.9/conn.go", "", false},
		{"github.com/lib/pq.(*conn).recv", "/w/vendor/github.com/lib/pq/conn.go", "/w", false},
		{"main.f", "", "", false},
	} {
		pos := binsym.Position{Function: tt.fn, File: tt.file, Line: 1}
		if got := InModule(pos, tt.workspace); got != tt.want {
			t.Errorf("InModule(%s at %s, workspace %q) = %v, want %v", tt.fn, tt.file, tt.workspace, got, tt.want)
		}
	}
}
