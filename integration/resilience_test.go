package integration

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/demo"
	"github.com/dpproxy/dpproxy/server"
)

// Restarting the demo on the same data directory keeps the data and the
// ledger: what a user spent before the restart is still spent.
func TestDemoRestartKeepsLedger(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	opts := demo.Options{MySQLListen: "127.0.0.1:0", PGListen: "127.0.0.1:0", AdminListen: "127.0.0.1:0", DataDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	spend := func() (float64, float64) {
		srv, err := demo.Start(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		tg := &target{addr: srv.MySQLAddr(), db: demo.Database}
		c := tg.session(t, "analyst", "analyst")
		before, _ := budget(t, c)
		mustExec(t, c, "SET dp_epsilon = 0.5")
		mustExec(t, c, "SET dp_cache = off")
		queryRows(t, c, "SELECT COUNT(*) FROM adult")
		after, _ := budget(t, c)
		c.Close()
		return before, after
	}
	b1, a1 := spend()
	b2, a2 := spend()
	if b1 != 0 || a1 != 0.5 || b2 != 0.5 || a2 != 1 {
		t.Errorf("spent across a restart: first run %v → %v, second run %v → %v", b1, a1, b2, a2)
	}
	if _, err := os.Stat(filepath.Join(dir, "demo.db")); err != nil {
		t.Errorf("the demo database is not in the data dir: %v", err)
	}
}

// forwarder is a TCP relay between dpproxy and MariaDB that a test can cut,
// to play a backend that goes away.
type forwarder struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
}

func newForwarder(t *testing.T, target string) *forwarder {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &forwarder{ln: ln, target: target}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			f.mu.Lock()
			f.conns = append(f.conns, c, b)
			f.mu.Unlock()
			go func() { io.Copy(b, c); b.Close() }()
			go func() { io.Copy(c, b); c.Close() }()
		}
	}()
	return f
}

// cut closes the listener and every relayed connection.
func (f *forwarder) cut() {
	f.ln.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		c.Close()
	}
	f.conns = nil
}

// A backend that goes away: queries fail with a clear error, nothing is
// charged, and the proxy stays up for everything that needs no backend.
func TestBackendGoesAway(t *testing.T) {
	dsn := os.Getenv("DPPROXY_TEST_MYSQL_DSN")
	if dsn == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI needs DPPROXY_TEST_MYSQL_DSN")
		}
		t.Skip("needs MariaDB (scripts/test.sh starts one)")
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	fw := newForwarder(t, cfg.Addr)
	defer fw.cut()
	cfg.Addr = fw.ln.Addr().String()
	pol, err := testPolicy("mysql", cfg.FormatDSN(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Start(context.Background(), server.Options{Policy: pol, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tg := &target{addr: srv.MySQLAddr(), db: cfg.DBName}
	c := tg.session(t, "tester", testerPassword)
	mustExec(t, c, "SET dp_cache = off") // a repeat must reach the backend
	queryRows(t, c, "SELECT COUNT(*) FROM adult")
	before, _ := budget(t, c)

	fw.cut()
	me := mysqlError(t, c, "SELECT COUNT(*) FROM adult")
	if me.Number != 1105 || !strings.Contains(me.Message, "nothing was charged") {
		t.Errorf("query with the backend gone: %d %q", me.Number, me.Message)
	}
	if after, _ := budget(t, c); after != before {
		t.Errorf("a failed backend query was charged: %v → %v", before, after)
	}
	// The proxy is still up: new sessions connect and get answers that need
	// no backend.
	c2 := tg.session(t, "tester", testerPassword)
	if _, rows := queryRows(t, c2, "SELECT 1 + 1"); rows[0][0] != "2" {
		t.Errorf("SELECT 1 + 1 = %v", rows)
	}
}

// A ledger directory that is not a ledger (corrupt, or lost and replaced
// by something else) stops the proxy at start with a clear message; the
// proxy never starts on an empty ledger in place of the lost one, and it
// leaves the directory as it found it.
func TestCorruptLedgerStopsTheProxy(t *testing.T) {
	dir := t.TempDir()
	pol, err := testPolicy("sqlite", filepath.Join(dir, "demo.db"), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.Prepare(context.Background(), pol); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(pol.Ledger.Path, 0o700); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(pol.Ledger.Path, "000001.vlog")
	if err := os.WriteFile(junk, []byte("not a ledger"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := server.Start(context.Background(), server.Options{Policy: pol, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil {
		srv.Close()
		t.Fatal("the proxy started on a corrupt ledger")
	}
	if !strings.Contains(err.Error(), pol.Ledger.Path) {
		t.Errorf("the error does not name the ledger: %v", err)
	}
	if b, _ := os.ReadFile(junk); string(b) != "not a ledger" {
		t.Error("the corrupt ledger was changed")
	}
}
