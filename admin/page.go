package admin

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"time"
)

//go:embed assets/page.html assets/style.css
var assets embed.FS

// refreshSeconds is how often the page reloads itself.
const refreshSeconds = 10

// window is one choice of time span for the chart.
type window struct {
	Key string // the ?window= value
	Dur time.Duration
}

var windows = []window{
	{"1h", time.Hour},
	{"6h", 6 * time.Hour},
	{"24h", 24 * time.Hour},
	{"7d", 7 * 24 * time.Hour},
	{"30d", 30 * 24 * time.Hour},
}

// pages renders the budget page and its JSON twin from a Source.
type pages struct {
	src    Source
	logger *slog.Logger
	tmpl   *template.Template
	css    []byte
	window time.Duration
	loc    *time.Location
	now    func() time.Time
}

func newPages(cfg Config) (*pages, error) {
	tmpl, err := template.ParseFS(assets, "assets/page.html")
	if err != nil {
		return nil, fmt.Errorf("admin: parse page template: %w", err)
	}
	css, err := assets.ReadFile("assets/style.css")
	if err != nil {
		return nil, fmt.Errorf("admin: read stylesheet: %w", err)
	}
	p := &pages{
		src: cfg.Source, logger: loggerOf(cfg), tmpl: tmpl, css: css,
		window: cfg.Window, loc: cfg.Location, now: cfg.Now,
	}
	if p.window <= 0 {
		p.window = 24 * time.Hour
	}
	if p.loc == nil {
		p.loc = time.Local
	}
	if p.now == nil {
		p.now = time.Now
	}
	return p, nil
}

// pageData is everything the template prints.
type pageData struct {
	Refresh   int
	Updated   string
	Rows      []budgetView
	Roles     int
	Users     int
	NearLimit int
	Window    string
	Windows   []windowLink
	Chart     chartView
}

type windowLink struct {
	Key     string
	Current bool
}

func (p *pages) budgetPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), sourceTimeout)
	defer cancel()
	now := p.now()
	win := p.chosenWindow(r)

	rows, err := p.src.Budgets(ctx)
	if err != nil {
		p.fail(w, r, "read budgets", err)
		return
	}
	spends, err := p.src.Spending(ctx, now.Add(-win.Dur))
	if err != nil {
		p.fail(w, r, "read spending", err)
		return
	}

	d := pageData{
		Refresh: refreshSeconds,
		Updated: now.In(p.loc).Format("2006-01-02 15:04:05 MST"),
		Rows:    budgetViews(rows),
		Window:  win.Key,
		Chart:   buildChart(spends, now.Add(-win.Dur), now, p.loc),
	}
	for _, v := range d.Rows {
		if v.Kind == KindRole {
			d.Roles++
		} else {
			d.Users++
		}
		if v.Limited && v.Fraction > warnAt {
			d.NearLimit++
		}
	}
	for _, o := range windows {
		d.Windows = append(d.Windows, windowLink{Key: o.Key, Current: o.Key == win.Key})
	}

	// Render to a buffer so that a template error never sends half a page.
	var buf bytes.Buffer
	if err := p.tmpl.Execute(&buf, d); err != nil {
		p.fail(w, r, "render page", err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(buf.Bytes())
}

// chosenWindow is the ?window= choice if it is one of windows, else the
// configured default.
func (p *pages) chosenWindow(r *http.Request) window {
	key := r.URL.Query().Get("window")
	if i := slices.IndexFunc(windows, func(o window) bool { return o.Key == key }); i >= 0 {
		return windows[i]
	}
	for _, o := range windows {
		if o.Dur == p.window {
			return o
		}
	}
	return window{Key: p.window.String(), Dur: p.window}
}

// budgetJSON is a BudgetRow for /api/budgets.json. An unlimited total is
// null: JSON has no infinity.
type budgetJSON struct {
	Kind         string   `json:"kind"`
	Name         string   `json:"name"`
	Role         string   `json:"role,omitempty"`
	EpsilonSpent float64  `json:"epsilon_spent"`
	EpsilonTotal *float64 `json:"epsilon_total"`
	DeltaSpent   float64  `json:"delta_spent"`
	DeltaTotal   *float64 `json:"delta_total"`
	Fraction     *float64 `json:"fraction"` // ε spent / ε total, clamped to [0, 1]; null if unlimited
}

func (p *pages) budgetsJSON(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), sourceTimeout)
	defer cancel()
	rows, err := p.src.Budgets(ctx)
	if err != nil {
		p.fail(w, r, "read budgets", err)
		return
	}
	out := struct {
		Generated time.Time    `json:"generated"`
		Budgets   []budgetJSON `json:"budgets"`
	}{Generated: p.now().UTC(), Budgets: make([]budgetJSON, 0, len(rows))}
	for _, row := range rows {
		b := budgetJSON{
			Kind: row.Kind, Name: row.Name, Role: row.Role,
			EpsilonSpent: finite(row.EpsilonSpent), EpsilonTotal: finitePtr(row.EpsilonTotal),
			DeltaSpent: finite(row.DeltaSpent), DeltaTotal: finitePtr(row.DeltaTotal),
		}
		if frac, limited := fraction(row.EpsilonSpent, row.EpsilonTotal); limited {
			b.Fraction = &frac
		}
		out.Budgets = append(out.Budgets, b)
	}
	body, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		p.fail(w, r, "encode budgets", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(append(body, '\n'))
}

func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

func finitePtr(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func (p *pages) stylesheet(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "max-age=300")
	_, _ = w.Write(p.css)
}

// fail logs the cause and tells the browser only that the ledger could not
// be read: the details stay in the proxy's log.
func (p *pages) fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	p.logger.ErrorContext(r.Context(), "admin page failed", "path", r.URL.Path, "step", what, "err", err)
	http.Error(w, "dpproxy admin: could not "+what+"; see the proxy's log", http.StatusServiceUnavailable)
}
