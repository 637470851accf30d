package dumptest

import (
	"compress/gzip"
	"io"
	"os"
	"testing"
)

// Gunzip decompresses the gzip file src (a stored fixture, as
// testdata/go1.NN/dump.gz) into a new file dst, mode 0600, and returns dst.
func Gunzip(t testing.TB, src, dst string) string {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	if err := zr.Close(); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}
