package profiles_test

import (
	"fmt"
	"os"

	"github.com/ctxleak/ctxleak/profiles"
)

// A base heap profile and one taken after 40 requests, in the debug=1 text
// form that runtime/pprof writes (gzipped proto reads the same way).
const (
	baseText = `heap profile: 64: 1048576 [70: 1150976] @ heap/2
64: 1048576 [70: 1150976] @ 0x41a2c5 0x6a4f21 0x6a4e10
#	0x6a4f20	main.fillCache+0x40	/src/cache.go:40
#	0x6a4e0f	main.main+0x2f		/src/main.go:20
`
	heapText = `heap profile: 104: 3670016 [110: 3772416] @ heap/2
40: 2621440 [40: 2621440] @ 0x6a5ff5 0x6a5fe0 0x6a2a31
#	0x6a5ff4	main.handleUpload+0x54			/src/upload.go:69
#	0x6a5fdf	net/http.HandlerFunc.ServeHTTP+0x2f	/go/src/net/http/server.go:2286
#	0x6a2a30	net/http.(*conn).serve+0x5f0		/go/src/net/http/server.go:2067

64: 1048576 [70: 1150976] @ 0x41a2c5 0x6a4f21 0x6a4e10
#	0x6a4f20	main.fillCache+0x40	/src/cache.go:40
#	0x6a4e0f	main.main+0x2f		/src/main.go:20
`
	goroutineText = `goroutine profile: total 41
40 @ 0x47d92e 0x6a7199 0x6a60e1 0x483e41
# labels: {"request_id":"r-17"}
#	0x6a7198	main.notify+0x18		/src/notify.go:85
#	0x6a60e0	main.handleUpload.func1+0x20	/src/upload.go:77

1 @ 0x442931 0x4c8771 0x483e41
#	0x4c8770	main.main+0x150		/src/main.go:29
`
)

func ExampleAnalyzeHeap() {
	base, err := profiles.Parse("base.txt", []byte(baseText))
	if err != nil {
		panic(err)
	}
	heap, err := profiles.Parse("heap.txt", []byte(heapText))
	if err != nil {
		panic(err)
	}
	r, err := profiles.AnalyzeHeap([]*profiles.Profile{heap}, []*profiles.Profile{base}, profiles.Options{Requests: 40})
	if err != nil {
		panic(err)
	}
	fmt.Printf("in use %d B, request-scoped %d B, growth %d B (%.0f B per request)\n",
		r.InuseBytes, r.RequestBytes, r.Base.GrowthBytes, r.Base.PerRequestBytes)
	for _, s := range r.Sites {
		fmt.Printf("%-36s %8d B  growth %+8d B  request %v\n", s.Position, s.InuseBytes, s.Growth.Bytes, s.Request)
	}
	// Output:
	// in use 3670016 B, request-scoped 2621440 B, growth 2621440 B (65536 B per request)
	// main.handleUpload (src/upload.go:69)  2621440 B  growth +2621440 B  request true
	// main.fillCache (src/cache.go:40)      1048576 B  growth       +0 B  request false
}

func ExampleAnalyzeGoroutines() {
	p, err := profiles.Parse("goroutine.txt", []byte(goroutineText))
	if err != nil {
		panic(err)
	}
	r, err := profiles.AnalyzeGoroutines([]*profiles.Profile{p}, profiles.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d goroutines, %d captured request contexts\n", r.Total, r.Captured)
	for _, g := range r.Groups {
		fmt.Printf("%d started in %s, waiting in %s, labels %v, captured %v\n", g.Count, g.Start, g.Wait, g.LabelKeys, g.Captured)
	}
	// Output:
	// 41 goroutines, 40 captured request contexts
	// 40 started in main.handleUpload.func1 (src/upload.go), waiting in main.notify (src/notify.go:85), labels [request_id], captured true
	// 1 started in main.main (src/main.go), waiting in main.main (src/main.go:29), labels [], captured false
}

func ExampleGates() {
	heap, _ := profiles.Parse("heap.txt", []byte(heapText))
	base, _ := profiles.Parse("base.txt", []byte(baseText))
	goroutines, _ := profiles.Parse("goroutine.txt", []byte(goroutineText))
	h, _ := profiles.AnalyzeHeap([]*profiles.Profile{heap}, []*profiles.Profile{base}, profiles.Options{})
	g, _ := profiles.AnalyzeGoroutines([]*profiles.Profile{goroutines}, profiles.Options{})

	limit := func(n int64) *int64 { return &n }
	results, err := profiles.Gates{Growth: limit(4 << 20), Goroutines: limit(0)}.Check(h, g)
	if err != nil {
		panic(err)
	}
	for _, r := range results {
		fmt.Printf("%s tripped=%v: %s\n", r.Gate, r.Tripped, r.Reason)
	}
	// Output:
	// growth tripped=false: heap in use grew by +2.5 MiB against the base, within the limit of 4.0 MiB
	// goroutines tripped=true: 40 goroutines off the request path still carry request labels, over the limit of 0
}

func ExampleReport_WriteText() {
	heap, _ := profiles.Parse("heap.txt", []byte(heapText))
	base, _ := profiles.Parse("base.txt", []byte(baseText))
	opt := profiles.Options{Requests: 40}
	r := &profiles.Report{
		Inputs:   []profiles.Input{profiles.NewInput(heap, profiles.RoleProfile), profiles.NewInput(base, profiles.RoleBase)},
		Settings: profiles.Settings{Top: 1, Requests: opt.Requests},
	}
	var err error
	if r.Heap, err = profiles.AnalyzeHeap([]*profiles.Profile{heap}, []*profiles.Profile{base}, opt); err != nil {
		panic(err)
	}
	limit := int64(1 << 20)
	if r.Gates, err = (profiles.Gates{Growth: &limit}).Check(r.Heap, nil); err != nil {
		panic(err)
	}
	if err := r.WriteText(os.Stdout, false); err != nil {
		panic(err)
	}
	fmt.Println(r.Reasons())
	// Output:
	// Heap in use: heap.txt (base: base.txt)
	//   in use          3.5 MiB in 104 objects
	//   request-scoped  2.5 MiB in 40 objects (71% of in use), allocated on request paths and still in use
	//   growth          +2.5 MiB and +40 objects against the base (1.0 MiB in 64 objects); 1 new site
	//   per request     +64.0 KiB over 40 requests
	//
	// Allocation sites by growth: top 1 of 2
	// +--------------------------------------+---------+---------+----------------+-------------+----------------+
	// | site                                 |  in use | objects |         growth | per request | request-scoped |
	// +--------------------------------------+---------+---------+----------------+-------------+----------------+
	// | main.handleUpload (src/upload.go:69) | 2.5 MiB |      40 | +2.5 MiB (new) |   +64.0 KiB |        2.5 MiB |
	// +--------------------------------------+---------+---------+----------------+-------------+----------------+
	//
	// Gates
	//   FAIL  growth      heap in use grew by +2.5 MiB against the base (+64.0 KiB per request over 40 requests), over the limit of 1.0 MiB (growth limit 1MiB)
	// [heap in use grew by +2.5 MiB against the base (+64.0 KiB per request over 40 requests), over the limit of 1.0 MiB (growth limit 1MiB)]
}
