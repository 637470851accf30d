package profiles_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"

	"github.com/ctxleak/ctxleak/profiles"
	"github.com/google/pprof/profile"
)

// BenchmarkLargeDecode decodes the large profile's uncompressed bytes with
// the package's decoder and with google/pprof's.
func BenchmarkLargeDecode(b *testing.B) {
	zr, err := gzip.NewReader(bytes.NewReader(largeHeapProfile(b)))
	if err != nil {
		b.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("own", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		defer reportCPU(b, cpuTime())
		for b.Loop() {
			if _, err := profiles.DecodeProto(raw, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pprof", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		defer reportCPU(b, cpuTime())
		for b.Loop() {
			if _, err := profile.ParseUncompressed(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}
