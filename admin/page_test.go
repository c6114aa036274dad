package admin

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/dpproxy/dpproxy/metrics"
)

func newTestHandler(t *testing.T, src Source, m *metrics.Metrics) http.Handler {
	t.Helper()
	h, err := NewHandler(Config{Source: src, Metrics: m, Location: time.UTC, Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func get(t *testing.T, h http.Handler, target string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec
}

// parsePage parses the page and returns its root, failing on a non-200.
func parsePage(t *testing.T, rec *httptest.ResponseRecorder) *html.Node {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	doc, err := html.Parse(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatalf("parse page: %v", err)
	}
	return doc
}

// findAll returns the elements under n with tag name and every class in classes.
func findAll(n *html.Node, tag string, classes ...string) []*html.Node {
	var out []*html.Node
	for d := range n.Descendants() {
		if d.Type == html.ElementNode && d.Data == tag && hasClasses(d, classes) {
			out = append(out, d)
		}
	}
	return out
}

func hasClasses(n *html.Node, want []string) bool {
	have := strings.Fields(attr(n, "class"))
	for _, c := range want {
		if !slices.Contains(have, c) {
			return false
		}
	}
	return true
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func text(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return strings.TrimSpace(b.String())
}

func TestBudgetPageListsRowsWithProportionalBars(t *testing.T) {
	doc := parsePage(t, get(t, newTestHandler(t, sampleSource(), nil), "/"))
	rows := findAll(findAll(doc, "tbody")[0], "tr")
	type want struct {
		name, level string
		width       float64 // of 100; -1 for no bar
		percent     string
	}
	wants := []want{
		{"analyst", levelOK, 40, "40%"},
		{"alice", levelOK, 50, "50%"},
		{hostileName, levelAlert, 95, "95%"},
		{"auditors", levelWarn, 80, "80%"},
		{"carol", "", -1, ""},
		{"dave", levelOK, 0, "0%"},
	}
	if len(rows) != len(wants) {
		t.Fatalf("%d table rows, want %d", len(rows), len(wants))
	}
	for i, w := range wants {
		row := rows[i]
		if got := text(findAll(row, "span", "who")[0]); got != w.name {
			t.Errorf("row %d: name %q, want %q", i, got, w.name)
		}
		if got := text(findAll(row, "td", "pct")[0]); got != w.percent {
			t.Errorf("row %d (%s): percent %q, want %q", i, w.name, got, w.percent)
		}
		fills := findAll(row, "rect", "fill")
		if w.width < 0 {
			if len(fills) != 0 || !strings.Contains(text(row), "no limit") {
				t.Errorf("row %d (%s): an unlimited budget should show no bar", i, w.name)
			}
			continue
		}
		if len(fills) != 1 {
			t.Fatalf("row %d (%s): %d bars", i, w.name, len(fills))
		}
		width, err := strconv.ParseFloat(attr(fills[0], "width"), 64)
		if err != nil || math.Abs(width-w.width) > 0.005 {
			t.Errorf("row %d (%s): bar width %q, want %g of the track's 100", i, w.name, attr(fills[0], "width"), w.width)
		}
		if !hasClasses(fills[0], []string{w.level}) {
			t.Errorf("row %d (%s): bar class %q, want level %s", i, w.name, attr(fills[0], "class"), w.level)
		}
		if track := findAll(row, "rect", "track"); len(track) != 1 || attr(track[0], "width") != "100" {
			t.Errorf("row %d (%s): the track is not the full 100 units", i, w.name)
		}
	}

	// Cards: 2 roles, 4 users, 2 over 75% (bob and auditors).
	var cards []string
	for _, c := range findAll(doc, "div", "card") {
		cards = append(cards, text(findAll(c, "div", "v")[0]))
	}
	if !slices.Equal(cards, []string{"2", "4", "2"}) {
		t.Errorf("cards %v, want [2 4 2]", cards)
	}
}

func TestBudgetPageEscapesNames(t *testing.T) {
	src := sampleSource()
	src.points = append(src.points, SpendPoint{Time: fixedNow.Add(-time.Hour), Role: `r"><script>x()</script>`, Epsilon: 1})
	body := get(t, newTestHandler(t, src, nil), "/").Body.String()
	if strings.Contains(body, "<script") {
		t.Error("the page contains a raw <script> tag")
	}
	if !strings.Contains(body, `bob&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;co`) {
		t.Error("the hostile user name is not shown HTML-escaped")
	}
	if strings.Contains(body, "ZgotmplZ") {
		t.Error("html/template rejected a value (ZgotmplZ in the page)")
	}
	// Parsed back, the names are intact text, not markup.
	doc := parsePage(t, get(t, newTestHandler(t, src, nil), "/"))
	if len(findAll(doc, "script")) != 0 {
		t.Error("the parsed page has a script element")
	}
	var legend []string
	for _, li := range findAll(doc, "li") {
		legend = append(legend, text(findAll(li, "span", "who")[0]))
	}
	if !slices.Contains(legend, `r"><script>x()</script>`) {
		t.Errorf("legend %q lacks the hostile role name as text", legend)
	}
}

func TestBudgetPageChartWindow(t *testing.T) {
	legend := func(target string, src *fakeSource) map[string]string {
		doc := parsePage(t, get(t, newTestHandler(t, src, nil), target))
		out := make(map[string]string)
		for _, li := range findAll(doc, "li") {
			out[text(findAll(li, "span", "who")[0])] = text(findAll(li, "span", "num")[0])
		}
		return out
	}
	src := sampleSource()
	for _, c := range []struct {
		target  string
		since   time.Duration
		analyst string
	}{
		{"/", 24 * time.Hour, "ε 12"},
		{"/?window=bogus", 24 * time.Hour, "ε 12"},
		{"/?window=7d", 7 * 24 * time.Hour, "ε 112"}, // includes the charge 48 h ago
		{"/?window=1h", time.Hour, "ε 0.5"},
	} {
		got := legend(c.target, src)
		if want := fixedNow.Add(-c.since); !src.since.Equal(want) {
			t.Errorf("GET %s asked for spending since %v, want %v", c.target, src.since, want)
		}
		if got["analyst"] != c.analyst {
			t.Errorf("GET %s: analyst legend %q, want %q", c.target, got["analyst"], c.analyst)
		}
	}

	doc := parsePage(t, get(t, newTestHandler(t, &fakeSource{rows: sampleRows()}, nil), "/"))
	if !strings.Contains(text(findAll(doc, "svg", "chart")[0]), "No charges in this window") {
		t.Error("an empty chart does not say so")
	}
}

func TestBudgetPageWithoutRows(t *testing.T) {
	doc := parsePage(t, get(t, newTestHandler(t, &fakeSource{}, nil), "/"))
	if len(findAll(doc, "table")) != 0 || !strings.Contains(text(doc), "No roles or users have a budget yet.") {
		t.Error("an empty ledger should say so instead of showing an empty table")
	}
}

func TestSourceErrorIsNotShown(t *testing.T) {
	h := newTestHandler(t, &fakeSource{err: errLedgerDown}, nil)
	for _, target := range []string{"/", "/api/budgets.json"} {
		rec := get(t, h, target)
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("GET %s with a failing source: status %d, want 503", target, rec.Code)
		}
		if strings.Contains(rec.Body.String(), "database is closed") {
			t.Errorf("GET %s leaks the internal error: %s", target, rec.Body)
		}
	}
}

func TestBudgetsJSON(t *testing.T) {
	rec := get(t, newTestHandler(t, sampleSource(), nil), "/api/budgets.json")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Content-Type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	var got struct {
		Generated time.Time `json:"generated"`
		Budgets   []struct {
			Kind         string   `json:"kind"`
			Name         string   `json:"name"`
			Role         string   `json:"role"`
			EpsilonSpent float64  `json:"epsilon_spent"`
			EpsilonTotal *float64 `json:"epsilon_total"`
			DeltaTotal   *float64 `json:"delta_total"`
			Fraction     *float64 `json:"fraction"`
		} `json:"budgets"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("decode: %v\n%s", err, rec.Body)
	}
	if !got.Generated.Equal(fixedNow) || len(got.Budgets) != len(sampleRows()) {
		t.Fatalf("generated %v with %d budgets", got.Generated, len(got.Budgets))
	}
	for _, b := range got.Budgets {
		switch b.Name {
		case "carol":
			if b.EpsilonTotal != nil || b.DeltaTotal != nil || b.Fraction != nil || b.EpsilonSpent != 1.25 {
				t.Errorf("carol (unlimited): %+v", b)
			}
		case hostileName:
			if b.EpsilonTotal == nil || *b.EpsilonTotal != 10 || b.Fraction == nil || *b.Fraction != 0.95 || b.Role != "analyst" {
				t.Errorf("bob: %+v", b)
			}
		}
	}
}

func TestRoutesAndHeaders(t *testing.T) {
	m := metrics.New()
	m.Answered("mysql", "dp")
	h := newTestHandler(t, sampleSource(), m)

	rec := get(t, h, "/metrics")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `dpproxy_queries_answered_total{frontend="mysql",kind="dp"} 1`) {
		t.Errorf("/metrics: status %d\n%.500s", rec.Code, rec.Body)
	}
	if rec := get(t, h, "/healthz"); rec.Code != http.StatusOK || rec.Body.String() != "ok\n" {
		t.Errorf("/healthz: %d %q", rec.Code, rec.Body)
	}
	rec = get(t, h, "/style.css")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/css") || !strings.Contains(rec.Body.String(), "--alert: #d93a3a") {
		t.Errorf("/style.css: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	if rec := get(t, h, "/nope"); rec.Code != http.StatusNotFound {
		t.Errorf("/nope: %d, want 404", rec.Code)
	}
	if rec := get(t, newTestHandler(t, sampleSource(), nil), "/metrics"); rec.Code != http.StatusNotFound {
		t.Errorf("/metrics without Metrics: %d, want 404", rec.Code)
	}

	// Read-only: nothing but GET and HEAD.
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, "/", strings.NewReader("x=1")))
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s /: %d, want 405", method, rec.Code)
		}
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("HEAD /: %d", rec.Code)
	}

	rec = get(t, h, "/")
	csp := rec.Header().Get("Content-Security-Policy")
	for _, d := range []string{"default-src 'none'", "style-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, d) {
			t.Errorf("CSP %q lacks %q", csp, d)
		}
	}
	if rec.Header().Get("X-Content-Type-Options") != "nosniff" || rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("headers %v", rec.Header())
	}
	// The CSP forbids inline styles and scripts: the page must not need them.
	doc := parsePage(t, rec)
	for d := range doc.Descendants() {
		if d.Type == html.ElementNode && (d.Data == "style" || d.Data == "script" || attr(d, "style") != "") {
			t.Errorf("<%s> needs inline style or script, which the CSP blocks", d.Data)
		}
	}
	if refresh := findAll(doc, "meta"); !slices.ContainsFunc(refresh, func(n *html.Node) bool {
		return attr(n, "http-equiv") == "refresh" && attr(n, "content") == "10"
	}) {
		t.Error("no 10 s meta refresh")
	}
}

func TestNewHandlerNeedsSource(t *testing.T) {
	if _, err := NewHandler(Config{}); err == nil {
		t.Error("NewHandler without a Source succeeded")
	}
	if _, err := Listen(Config{Addr: "127.0.0.1:0"}); err == nil {
		t.Error("Listen without a Source succeeded")
	}
}

func TestListenServeClose(t *testing.T) {
	srv, err := Listen(Config{Addr: "127.0.0.1:0", Source: sampleSource()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()

	resp, err := http.Get("http://" + srv.Addr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ok\n" {
		t.Errorf("GET /healthz: %d %q", resp.StatusCode, body)
	}

	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after Close")
	}
	if _, err := http.Get("http://" + srv.Addr() + "/healthz"); err == nil {
		t.Error("the listener still answers after Close")
	}
}

func TestCloseWithoutServeReleasesThePort(t *testing.T) {
	srv, err := Listen(Config{Addr: "127.0.0.1:0", Source: sampleSource()})
	if err != nil {
		t.Fatal(err)
	}
	addr := srv.Addr()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Listen(Config{Addr: addr, Source: sampleSource()})
	if err != nil {
		t.Fatalf("port %s still taken after Close: %v", addr, err)
	}
	again.Close()
}
