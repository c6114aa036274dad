package metrics

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape fetches /metrics from m's handler in the text format and parses it.
func scrape(t *testing.T, m *Metrics) (string, map[string]*dto.MetricFamily) {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", "text/plain")
	m.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: status %d: %s", rec.Code, rec.Body)
	}
	text := rec.Body.String()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse exposition: %v\n%s", err, text)
	}
	return text, fams
}

// series finds the metric in family name whose labels are exactly want.
func series(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	t.Helper()
	fam, ok := fams[name]
	if !ok {
		t.Fatalf("no metric family %s", name)
	}
next:
	for _, m := range fam.GetMetric() {
		if len(m.GetLabel()) != len(want) {
			continue
		}
		for _, l := range m.GetLabel() {
			if want[l.GetName()] != l.GetValue() {
				continue next
			}
		}
		return m
	}
	t.Fatalf("no series %s%v", name, want)
	return nil
}

func TestExpositionCountsEachCall(t *testing.T) {
	m := New()
	m.Answered("mysql", "dp")
	m.Answered("mysql", "dp")
	m.Answered("postgres", "catalog")
	m.Refused("mysql", ReasonBudget)
	m.Refused("postgres", ReasonRowLevel)
	m.Refused("postgres", ReasonRowLevel)
	m.Charged("analyst", 0.5, 1e-6)
	m.Charged("analyst", 0.25, 0)
	m.Charged("auditor", 1, 2e-6)
	m.Observe("mysql", "dp", 3*time.Millisecond)
	m.Observe("mysql", "dp", 2*time.Second)
	m.Connections("mysql", 1)
	m.Connections("mysql", 1)
	m.Connections("mysql", -1)

	text, fams := scrape(t, m)
	for _, name := range []string{
		"dpproxy_queries_answered_total", "dpproxy_queries_refused_total",
		"dpproxy_epsilon_spent_total", "dpproxy_delta_spent_total",
		"dpproxy_query_duration_seconds", "dpproxy_connections",
		"go_goroutines", "process_cpu_seconds_total",
	} {
		if !strings.Contains(text, "\n# TYPE "+name+" ") {
			t.Errorf("exposition lacks %s", name)
		}
	}

	counters := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"dpproxy_queries_answered_total", map[string]string{"frontend": "mysql", "kind": "dp"}, 2},
		{"dpproxy_queries_answered_total", map[string]string{"frontend": "postgres", "kind": "catalog"}, 1},
		{"dpproxy_queries_answered_total", map[string]string{"frontend": "postgres", "kind": "dp"}, 0},
		{"dpproxy_queries_refused_total", map[string]string{"frontend": "mysql", "reason": "budget"}, 1},
		{"dpproxy_queries_refused_total", map[string]string{"frontend": "postgres", "reason": "row_level"}, 2},
		{"dpproxy_queries_refused_total", map[string]string{"frontend": "mysql", "reason": "timeout"}, 0},
		{"dpproxy_epsilon_spent_total", map[string]string{"role": "analyst"}, 0.75},
		{"dpproxy_epsilon_spent_total", map[string]string{"role": "auditor"}, 1},
		{"dpproxy_delta_spent_total", map[string]string{"role": "analyst"}, 1e-6},
		{"dpproxy_delta_spent_total", map[string]string{"role": "auditor"}, 2e-6},
	}
	for _, c := range counters {
		got := series(t, fams, c.name, c.labels).GetCounter().GetValue()
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s%v = %g, want %g", c.name, c.labels, got, c.want)
		}
	}

	if got := series(t, fams, "dpproxy_connections", map[string]string{"frontend": "mysql"}).GetGauge().GetValue(); got != 1 {
		t.Errorf("dpproxy_connections{mysql} = %g, want 1", got)
	}

	h := series(t, fams, "dpproxy_query_duration_seconds", map[string]string{"frontend": "mysql", "kind": "dp"}).GetHistogram()
	if h.GetSampleCount() != 2 || math.Abs(h.GetSampleSum()-2.003) > 1e-9 {
		t.Errorf("histogram count %d sum %g, want 2 and 2.003", h.GetSampleCount(), h.GetSampleSum())
	}
	cum := map[float64]uint64{}
	for _, b := range h.GetBucket() {
		cum[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	for bound, want := range map[float64]uint64{0.0025: 0, 0.005: 1, 1: 1, 2.5: 2, 60: 2} {
		if got, ok := cum[bound]; !ok || got != want {
			t.Errorf("bucket le=%g: %d (present %v), want %d", bound, got, ok, want)
		}
	}
	if first, last := durationBuckets[0], durationBuckets[len(durationBuckets)-1]; first != 100e-6 || last != 60 {
		t.Errorf("buckets span %g..%g s, want 100µs..60s", first, last)
	}
}

func TestLabelsStayBounded(t *testing.T) {
	m := New()
	// Values outside the fixed sets, as a caller bug might pass them.
	m.Answered("mysql", "SELECT * FROM secrets WHERE name = 'alice'")
	m.Refused("carrier-pigeon", "alice ran out")
	m.Observe("mysql", "weird", time.Millisecond)
	for i := range MaxRoles + 10 {
		m.Charged(fmt.Sprintf("role%03d", i), 0.1, 0)
	}
	m.Charged("", 0.1, 0)
	m.Charged("analyst", -1, math.NaN()) // ignored: counters only go up

	text, fams := scrape(t, m)
	for _, leak := range []string{"secrets", "alice", "carrier-pigeon", "weird"} {
		if strings.Contains(text, leak) {
			t.Errorf("exposition contains %q", leak)
		}
	}
	if got := series(t, fams, "dpproxy_queries_answered_total", map[string]string{"frontend": "mysql", "kind": Other}).GetCounter().GetValue(); got != 1 {
		t.Errorf("answered{kind=other} = %g, want 1", got)
	}
	if got := series(t, fams, "dpproxy_queries_refused_total", map[string]string{"frontend": Other, "reason": Other}).GetCounter().GetValue(); got != 1 {
		t.Errorf("refused{other,other} = %g, want 1", got)
	}
	roles := fams["dpproxy_epsilon_spent_total"].GetMetric()
	if len(roles) != MaxRoles+1 {
		t.Errorf("%d role series, want %d (MaxRoles plus %s)", len(roles), MaxRoles+1, OverflowRole)
	}
	// 10 roles past the cap plus the empty one.
	if got := series(t, fams, "dpproxy_epsilon_spent_total", map[string]string{"role": OverflowRole}).GetCounter().GetValue(); math.Abs(got-1.1) > 1e-9 {
		t.Errorf("epsilon{role=%s} = %g, want 1.1", OverflowRole, got)
	}
	if strings.Contains(text, `role="analyst"`) {
		t.Error("a negative charge created a series")
	}
}

func TestEachMetricsHasItsOwnRegistry(t *testing.T) {
	a, b := New(), New()
	a.Answered("mysql", "dp")
	_, fams := scrape(t, b)
	if got := series(t, fams, "dpproxy_queries_answered_total", map[string]string{"frontend": "mysql", "kind": "dp"}).GetCounter().GetValue(); got != 0 {
		t.Errorf("a second Metrics sees the first one's count: %g", got)
	}
}

func TestNilMetricsIgnoresCalls(t *testing.T) {
	var m *Metrics
	m.Answered("mysql", "dp")
	m.Refused("mysql", ReasonBudget)
	m.Charged("analyst", 1, 0)
	m.Observe("mysql", "dp", time.Second)
	m.Connections("mysql", 1)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("nil Metrics handler: status %d, want 404", rec.Code)
	}
}

func TestTruncateKeepsValidUTF8(t *testing.T) {
	long := "a" + strings.Repeat("é", 40) // 81 bytes; byte 64 continues a rune
	got := truncate(long, maxRoleLen)
	if !strings.HasPrefix(long, got) || len(got) != 63 {
		t.Errorf("truncate: %d bytes %q", len(got), got)
	}
	if got := truncate("a\xffb", 10); got != "a\uFFFDb" {
		t.Errorf("truncate invalid UTF-8: %q", got)
	}
}
