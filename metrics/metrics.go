// Package metrics holds dpproxy's Prometheus collectors: statements answered
// and refused, privacy budget spent per role, statement latency and open
// client connections.
//
// The collectors live in their own registry, not the process-global one, so
// that two proxies in one test binary never share counters and nothing a
// library registers globally leaks onto the admin listener.
//
// Label values are bounded: frontends, statement kinds and refusal reasons
// come from small fixed sets (anything else is counted as "other"), and role
// names, which the policy bounds, are capped at MaxRoles distinct values.
// A user name or SQL text never becomes a label.
package metrics

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is the set of dpproxy collectors with their registry. All methods
// are safe for concurrent use; a nil *Metrics ignores every call, so callers
// need not check whether metrics are enabled.
type Metrics struct {
	reg *prometheus.Registry

	answered    *prometheus.CounterVec
	refused     *prometheus.CounterVec
	epsilon     *prometheus.CounterVec
	delta       *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	connections *prometheus.GaugeVec

	mu    sync.Mutex
	roles map[string]struct{} // role label values handed out so far
}

// durationBuckets are the latency histogram's upper bounds in seconds, from
// 100µs (a catalog answer from memory) to 60 s (a DP aggregate over a large
// table, or a TRAIN statement), in 1–2.5–5 steps so that each decade has
// three buckets.
var durationBuckets = []float64{
	0.0001, 0.00025, 0.0005,
	0.001, 0.0025, 0.005,
	0.01, 0.025, 0.05,
	0.1, 0.25, 0.5,
	1, 2.5, 5,
	10, 30, 60,
}

// New returns a Metrics with every collector registered in a fresh registry,
// along with the Go runtime and process collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		answered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dpproxy_queries_answered_total",
			Help: "Statements answered, by front door and kind of statement.",
		}, []string{"frontend", "kind"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dpproxy_queries_refused_total",
			Help: "Statements refused or failed, by front door and reason.",
		}, []string{"frontend", "reason"}),
		epsilon: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dpproxy_epsilon_spent_total",
			Help: "Privacy loss ε charged to the ledger, by role (refunds are not subtracted).",
		}, []string{"role"}),
		delta: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dpproxy_delta_spent_total",
			Help: "Privacy loss δ charged to the ledger, by role (refunds are not subtracted).",
		}, []string{"role"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "dpproxy_query_duration_seconds",
			Help:    "Time from receiving a statement to its answer or refusal.",
			Buckets: durationBuckets,
		}, []string{"frontend", "kind"}),
		connections: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "dpproxy_connections",
			Help: "Client connections open now, by front door.",
		}, []string{"frontend"}),
		roles: make(map[string]struct{}),
	}
	m.reg.MustRegister(
		m.answered, m.refused, m.epsilon, m.delta, m.duration, m.connections,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	m.initSeries()
	return m
}

// initSeries creates every frontend × kind and frontend × reason series at
// zero, so that rate() and alerts see a refusal reason before its first
// occurrence instead of a missing series ("Avoid missing metrics",
// https://prometheus.io/docs/practices/instrumentation/#avoid-missing-metrics).
func (m *Metrics) initSeries() {
	for _, f := range frontends {
		for _, k := range kinds {
			m.answered.WithLabelValues(f, k)
		}
		for _, r := range reasons {
			m.refused.WithLabelValues(f, r)
		}
		m.connections.WithLabelValues(f)
	}
}

// Answered counts one statement answered by frontend ("mysql", "postgres")
// of the given kind ("dp", "catalog", "public", "admin", ...).
func (m *Metrics) Answered(frontend, kind string) {
	if m == nil {
		return
	}
	m.answered.WithLabelValues(Frontend(frontend), Kind(kind)).Inc()
}

// Refused counts one statement refused or failed by frontend for reason, one
// of the Reason constants.
func (m *Metrics) Refused(frontend, reason string) {
	if m == nil {
		return
	}
	m.refused.WithLabelValues(Frontend(frontend), Reason(reason)).Inc()
}

// Charged adds one ledger charge of (epsilon, delta) to role's totals.
// Negative or NaN amounts are ignored: counters only go up, and a refund is
// the ledger's business, not a metric's.
func (m *Metrics) Charged(role string, epsilon, delta float64) {
	if m == nil {
		return
	}
	r := m.role(role)
	if epsilon > 0 {
		m.epsilon.WithLabelValues(r).Add(epsilon)
	}
	if delta > 0 {
		m.delta.WithLabelValues(r).Add(delta)
	}
}

// Observe records how long a statement of kind took on frontend.
func (m *Metrics) Observe(frontend, kind string, d time.Duration) {
	if m == nil {
		return
	}
	m.duration.WithLabelValues(Frontend(frontend), Kind(kind)).Observe(d.Seconds())
}

// Connections moves the open-connection gauge of frontend by delta: +1 when
// a client connects, -1 when it leaves.
func (m *Metrics) Connections(frontend string, delta int) {
	if m == nil {
		return
	}
	m.connections.WithLabelValues(Frontend(frontend)).Add(float64(delta))
}

// Handler serves the registry in the Prometheus exposition formats, for
// mounting at /metrics. A nil *Metrics serves 404.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		Registry:          m.reg, // counts scrape errors in promhttp_metric_handler_errors_total
		EnableOpenMetrics: true,
	})
}

// Gatherer exposes the registry, for tests and for embedding dpproxy's
// metrics in another exporter.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }
