// Package admin serves dpproxy's HTTP listener for DBAs (listen.admin in the
// policy): Prometheus metrics at /metrics, a read-only page of privacy
// budgets at /, the same budgets as JSON at /api/budgets.json, and a
// liveness probe at /healthz.
//
// Nothing on this listener changes state: budgets are set in SQL through the
// proxy, where the caller's role is checked. The listener has no
// authentication of its own, so bind it to localhost or a management network.
package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/dpproxy/dpproxy/metrics"
)

// Config configures the admin listener. Source is required; the rest may be
// left zero.
type Config struct {
	Addr    string           // host:port to listen on; ":0" picks a free port
	Metrics *metrics.Metrics // served at /metrics; nil serves 404 there
	Source  Source           // budgets and charges, read on every page load
	Logger  *slog.Logger     // nil discards

	Window   time.Duration    // the chart's default time window; 24 h if zero
	Location *time.Location   // time zone for the page's times; time.Local if nil
	Now      func() time.Time // the clock; time.Now if nil (tests set it)
}

// sourceTimeout bounds how long one page load waits for the ledger.
const sourceTimeout = 5 * time.Second

// Server is the running admin listener.
type Server struct {
	ln     net.Listener
	srv    *http.Server
	logger *slog.Logger
}

// Listen validates cfg and binds cfg.Addr; Serve then answers requests.
func Listen(cfg Config) (*Server, error) {
	h, err := NewHandler(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("admin: listen on %s: %w", cfg.Addr, err)
	}
	logger := loggerOf(cfg)
	return &Server{
		ln:     ln,
		logger: logger,
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       10 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       2 * time.Minute,
			MaxHeaderBytes:    16 << 10,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		},
	}, nil
}

// Addr is the address the server listens on, with the port filled in.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve answers requests until Close; it returns nil after Close.
func (s *Server) Serve() error {
	s.logger.Info("admin listener serving", "addr", s.Addr())
	if err := s.srv.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("admin: serve on %s: %w", s.Addr(), err)
	}
	return nil
}

// Close stops accepting requests, lets those in flight finish for a few
// seconds, then drops the rest.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = s.srv.Close()
	}
	// Shutdown closes only listeners that Serve was given; close ours in
	// case Serve never ran.
	if cerr := s.ln.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) && err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("admin: close %s: %w", s.Addr(), err)
	}
	return nil
}

// NewHandler returns the admin routes without a listener, for mounting on a
// server the caller owns.
func NewHandler(cfg Config) (http.Handler, error) {
	if cfg.Source == nil {
		return nil, errors.New("admin: no budget source configured")
	}
	p, err := newPages(cfg)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	// GET patterns match HEAD too; other methods get 405: the listener is
	// read-only.
	mux.Handle("GET /metrics", cfg.Metrics.Handler())
	mux.HandleFunc("GET /healthz", healthz)
	mux.HandleFunc("GET /{$}", p.budgetPage)
	mux.HandleFunc("GET /style.css", p.stylesheet)
	mux.HandleFunc("GET /api/budgets.json", p.budgetsJSON)
	return secureHeaders(mux), nil
}

func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintln(w, "ok")
}

// secureHeaders forbids scripts, frames, plugins and third-party anything:
// the page is static HTML and one stylesheet, so the strictest Content
// Security Policy costs nothing and makes any escaping slip inert.
func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy",
			"default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

func loggerOf(cfg Config) *slog.Logger {
	if cfg.Logger != nil {
		return cfg.Logger
	}
	return slog.New(slog.DiscardHandler)
}
