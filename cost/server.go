package cost

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
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

// measureServer serves m's handler on 127.0.0.1 and drives it for d with
// vegeta from the same process: Connections connections, each sending its
// next request as soon as the last one is answered.
func measureServer(m *Measurement, d time.Duration) (map[string]float64, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: m.server(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		srv.Close()
		<-served
	}()

	target := vegeta.Target{Method: "GET", URL: "http://" + ln.Addr().String() + "/orders",
		Header: http.Header{"X-Request-Id": []string{"req-7f3a9c"}}}
	attacker := vegeta.NewAttacker(
		vegeta.Connections(Connections), vegeta.MaxConnections(Connections),
		vegeta.Workers(Connections), vegeta.MaxWorkers(Connections),
		vegeta.KeepAlive(true), vegeta.Timeout(10*time.Second))
	var metrics vegeta.Metrics
	for res := range attacker.Attack(vegeta.NewStaticTargeter(target), vegeta.Rate{}, d, m.Name) {
		metrics.Add(res)
	}
	metrics.Close()
	if metrics.Requests == 0 {
		return nil, errors.New("the load generator sent no request")
	}
	if metrics.Success < 1 {
		return nil, fmt.Errorf("%.1f%% of %d requests failed: %v",
			100*(1-metrics.Success), metrics.Requests, metrics.Errors)
	}
	return map[string]float64{
		RequestsPerSecond: metrics.Throughput,
		LatencyP50Ns:      float64(metrics.Latencies.P50),
		LatencyP99Ns:      float64(metrics.Latencies.P99),
	}, nil
}
