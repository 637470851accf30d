// Package watchprom exports the counts of a watch.Watcher as Prometheus
// metrics, so that package watch itself does not depend on Prometheus:
//
//	prometheus.MustRegister(watchprom.NewCollector(w))
//
// The metrics, each with a "label" label (the watcher's label: a route
// pattern, or a method and path prefix):
//
//	ctxleak_watched_total   counter  values expected to become unreachable
//	ctxleak_outlived_total  counter  values found alive after their grace
//	ctxleak_alive           gauge    outlived values still alive
//
// and without labels ctxleak_reports_total (counter),
// ctxleak_forced_gcs_total (counter), and from Go 1.27's goroutineleak
// profile (watch.Options.LeakInterval) ctxleak_leak_checks_total (counter),
// ctxleak_leaked_goroutines (gauge: goroutines proven leaked at the last
// check) and ctxleak_leaked_retained_bytes (gauge: what they retained at
// the last check with a heap dump, 0 before one).
package watchprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ctxleak/ctxleak/watch"
)

var (
	watchedDesc = prometheus.NewDesc("ctxleak_watched_total",
		"Values (request contexts, tracked values) expected to become unreachable within the grace.", []string{"label"}, nil)
	outlivedDesc = prometheus.NewDesc("ctxleak_outlived_total",
		"Values found alive after their grace.", []string{"label"}, nil)
	aliveDesc = prometheus.NewDesc("ctxleak_alive",
		"Values that outlived their grace and are still alive.", []string{"label"}, nil)
	reportsDesc = prometheus.NewDesc("ctxleak_reports_total",
		"Reports made (heap dumps taken and analysed).", nil, nil)
	forcedDesc = prometheus.NewDesc("ctxleak_forced_gcs_total",
		"Garbage collections the watcher started because none ran while values waited.", nil, nil)
	leakChecksDesc = prometheus.NewDesc("ctxleak_leak_checks_total",
		"Goroutineleak profiles taken (Go 1.27 and later).", nil, nil)
	leakedDesc = prometheus.NewDesc("ctxleak_leaked_goroutines",
		"Goroutines the last goroutineleak profile proved leaked.", nil, nil)
	leakedBytesDesc = prometheus.NewDesc("ctxleak_leaked_retained_bytes",
		"Bytes the goroutines proven leaked alone kept alive at the last leak check with a heap dump; 0 before one.", nil, nil)
)

// Collector is a prometheus.Collector of a Watcher's counts, read at each
// scrape with Watcher.Stats.
type Collector struct {
	w *watch.Watcher
}

// NewCollector returns the Collector of w.
func NewCollector(w *watch.Watcher) *Collector { return &Collector{w: w} }

// Describe sends the descriptions of the metrics.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{watchedDesc, outlivedDesc, aliveDesc, reportsDesc, forcedDesc,
		leakChecksDesc, leakedDesc, leakedBytesDesc} {
		ch <- d
	}
}

// Collect sends the counts now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	st := c.w.Stats()
	for _, l := range st.Labels {
		ch <- prometheus.MustNewConstMetric(watchedDesc, prometheus.CounterValue, float64(l.Watched), l.Label)
		ch <- prometheus.MustNewConstMetric(outlivedDesc, prometheus.CounterValue, float64(l.Outlived), l.Label)
		ch <- prometheus.MustNewConstMetric(aliveDesc, prometheus.GaugeValue, float64(l.Alive), l.Label)
	}
	ch <- prometheus.MustNewConstMetric(reportsDesc, prometheus.CounterValue, float64(st.Reports))
	ch <- prometheus.MustNewConstMetric(forcedDesc, prometheus.CounterValue, float64(st.ForcedGCs))
	ch <- prometheus.MustNewConstMetric(leakChecksDesc, prometheus.CounterValue, float64(st.LeakChecks))
	ch <- prometheus.MustNewConstMetric(leakedDesc, prometheus.GaugeValue, float64(st.LeakedGoroutines))
	ch <- prometheus.MustNewConstMetric(leakedBytesDesc, prometheus.GaugeValue, float64(st.LeakedRetainedBytes))
}
