package cost

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Connections is the number of connections the load generator keeps open
// to the server, and the number of requests in flight.
const Connections = 10

// values are the request-scoped values every server handler uses.
type values struct{ requestID, user, tenant, locale, traceID string }

// readsPerRequest is how many times each handler reads a request value.
const readsPerRequest = 12

// fromRequest derives the request's values from its header, as an
// authentication or tracing middleware would.
func fromRequest(r *http.Request) values {
	return values{
		requestID: r.Header.Get("X-Request-Id"),
		user:      "user-42",
		tenant:    "tenant-7",
		locale:    "en-GB",
		traceID:   "4bf92f3577b34da6",
	}
}

// respond writes a reply built from n, the total length of the values read.
func respond(w http.ResponseWriter, n int) {
	w.Header().Set("Content-Type", "text/plain")
	w.Write(strconv.AppendInt(nil, int64(n), 10))
}

// serveArguments hands the values to the code that uses them as arguments.
func serveArguments() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := fromRequest(r)
		respond(w, useArguments(v.requestID, v.user, v.tenant, v.locale, v.traceID))
	})
}

//go:noinline
func useArguments(requestID, user, tenant, locale, traceID string) int {
	n := 0
	for i := range readsPerRequest {
		switch i % 5 {
		case 0:
			n += len(requestID)
		case 1:
			n += len(user)
		case 2:
			n += len(tenant)
		case 3:
			n += len(locale)
		default:
			n += len(traceID)
		}
	}
	return n
}

// serveValue12: one middleware stores the values in the request context,
// and the handler reads them back with ctx.Value 12 times.
func serveValue12() http.Handler {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		n := 0
		for range readsPerRequest {
			v, _ := ctx.Value(requestIDKey).(*values)
			n += len(v.requestID)
		}
		respond(w, n)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := fromRequest(r)
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey, &v)))
	})
}

// serveMiddleware5: a chain of 5 middlewares, each storing one value with
// WithValue; the handler reads them 12 times.
func serveMiddleware5() http.Handler {
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		n := 0
		for i := range readsPerRequest {
			s, _ := ctx.Value(ctxKey(i % 5)).(string)
			n += len(s)
		}
		respond(w, n)
	})
	for i := 4; i >= 0; i-- {
		next, key := h, ctxKey(i)
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			v := fromRequest(r)
			val := [...]string{v.requestID, v.user, v.tenant, v.locale, v.traceID}[key]
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), key, val)))
		})
	}
	return h
}

// serverSlice is the longest attack on one handler before the next
// handler's turn: the handlers of a child take turns in slices this long,
// so a change in the machine's pace falls on all of them alike.
const serverSlice = 100 * time.Millisecond

// loadTarget is one handler served on 127.0.0.1 and the client that
// drives it, with what its attacks measured so far.
type loadTarget struct {
	m       *Measurement
	srv     *http.Server
	served  chan error
	target  vegeta.Target
	client  *http.Client   // kept across slices, and so its connections
	all     vegeta.Metrics // every result, for the latencies
	success float64        // successful requests over all slices
	elapsed time.Duration  // the slices' durations, waits included
}

// measureServers serves each of ms's handlers on 127.0.0.1 and drives
// them with vegeta from this process, Connections connections each
// sending its next request when the last is answered. The handlers take
// turns (round robin, a different one first each round) in slices of at
// most serverSlice until each has had d of load; each one's throughput is
// its successful requests over its slices' time, its latencies those of
// all its requests, its ThroughputRatio its throughput over that of the
// arguments handler, which ms must hold.
func measureServers(ms []*Measurement, d time.Duration) ([]map[string]float64, error) {
	args := slices.IndexFunc(ms, isArguments)
	if args < 0 {
		return nil, errors.New("the arguments handler is not among the handlers measured")
	}
	var targets []*loadTarget
	defer func() {
		for _, t := range targets {
			t.client.CloseIdleConnections()
			t.srv.Close()
			<-t.served
		}
	}()
	for _, m := range ms {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		t := &loadTarget{m: m, served: make(chan error, 1),
			srv: &http.Server{Handler: m.server(), ReadHeaderTimeout: 10 * time.Second}}
		go func() { t.served <- t.srv.Serve(ln) }()
		targets = append(targets, t)
		t.target = vegeta.Target{Method: "GET", URL: "http://" + ln.Addr().String() + "/orders",
			Header: http.Header{"X-Request-Id": []string{requestID}}}
		t.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			MaxIdleConnsPerHost: Connections, MaxConnsPerHost: Connections}}
	}
	rounds := max(1, int((d+serverSlice/2)/serverSlice))
	slice := d / time.Duration(rounds)
	for round := range rounds {
		for i := range targets {
			if err := targets[(round+i)%len(targets)].attack(slice); err != nil {
				return nil, err
			}
		}
	}
	out := make([]map[string]float64, len(targets))
	for i, t := range targets {
		t.all.Close()
		if t.all.Requests == 0 {
			return nil, fmt.Errorf("%s: the load generator sent no request", t.m.Name)
		}
		if t.all.Success < 1 || t.elapsed <= 0 {
			return nil, fmt.Errorf("%s: %.1f%% of %d requests failed: %v",
				t.m.Name, 100*(1-t.all.Success), t.all.Requests, t.all.Errors)
		}
		out[i] = map[string]float64{
			RequestsPerSecond: t.success / t.elapsed.Seconds(),
			LatencyP50Ns:      float64(t.all.Latencies.P50),
			LatencyP99Ns:      float64(t.all.Latencies.P99),
		}
	}
	for _, figs := range out {
		figs[ThroughputRatio] = figs[RequestsPerSecond] / out[args][RequestsPerSecond]
	}
	return out, nil
}

// argumentsServer is the Server row the others' throughput is judged
// against.
const argumentsServer = "server-arguments"

// isArguments reports whether m is the argumentsServer row.
func isArguments(m *Measurement) bool { return m.Name == argumentsServer }

// attack drives t's handler for d and adds what it measured. An attacker
// serves one attack; the client, and so its open connections, stay.
func (t *loadTarget) attack(d time.Duration) error {
	attacker := vegeta.NewAttacker(vegeta.Client(t.client),
		vegeta.Workers(Connections), vegeta.MaxWorkers(Connections))
	var slice vegeta.Metrics
	for res := range attacker.Attack(vegeta.NewStaticTargeter(t.target), vegeta.Rate{}, d, t.m.Name) {
		slice.Add(res)
		t.all.Add(res)
	}
	slice.Close()
	if slice.Requests == 0 {
		return errors.New(t.m.Name + ": the load generator sent no request")
	}
	t.success += slice.Success * float64(slice.Requests)
	t.elapsed += slice.Duration + slice.Wait
	return nil
}
