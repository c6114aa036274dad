package mysqlwire

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/proxy"
)

// engine is a fake of the proxy engine: it answers a fixed set of
// statements and records everything that reaches it.
type engine struct {
	t testing.TB // nil: do not log

	mu       sync.Mutex
	opened   []string // "user/db" per Open
	closed   int
	received []string // SQL text per Execute/Prepare
	args     [][]proxy.Value
}

func (e *engine) open(ctx context.Context, user, db string) (Session, error) {
	if db == "nope" {
		return nil, proxy.Errorf(proxy.CodeUnknownDB, "Unknown database '%s'", db)
	}
	e.mu.Lock()
	e.opened = append(e.opened, user+"/"+db)
	e.mu.Unlock()
	return &fakeSession{e: e, user: user, db: db}, nil
}

func (e *engine) record(sql string, args []proxy.Value) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.received = append(e.received, sql)
	if args != nil {
		e.args = append(e.args, args)
	}
}

func (e *engine) snapshot() (opened []string, closed int, received []string, args [][]proxy.Value) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.opened...), e.closed, append([]string(nil), e.received...), append([][]proxy.Value(nil), e.args...)
}

type fakeSession struct {
	e    *engine
	user string
	db   string
}

// errorStatements are "error <name>" statements and the engine error each
// returns.
var errorStatements = map[string]proxy.Code{
	"syntax":      proxy.CodeSyntax,
	"unsupported": proxy.CodeUnsupported,
	"refused":     proxy.CodeRefused,
	"budget":      proxy.CodeBudget,
	"table":       proxy.CodeUnknownTable,
	"column":      proxy.CodeUnknownColumn,
	"db":          proxy.CodeUnknownDB,
	"permission":  proxy.CodePermission,
	"value":       proxy.CodeBadValue,
	"backend":     proxy.CodeBackend,
	"timeout":     proxy.CodeTimeout,
	"auth":        proxy.CodeAuth,
	"conns":       proxy.CodeTooManyConnections,
	"canceled":    proxy.CodeCanceled,
	"internal":    proxy.CodeInternal,
}

func (s *fakeSession) Execute(ctx context.Context, sql string) (*proxy.Result, error) {
	s.e.record(sql, nil)
	if s.e.t != nil {
		s.e.t.Logf("engine got %q", sql)
	}
	if name, ok := strings.CutPrefix(sql, "error "); ok {
		if name == "plain" {
			return nil, fmt.Errorf("something broke")
		}
		return nil, proxy.Errorf(errorStatements[name], "failed: %s", name)
	}
	if db, ok := strings.CutPrefix(sql, "use "); ok {
		db = strings.Trim(db, "`")
		if db == "nope" {
			return nil, proxy.Errorf(proxy.CodeUnknownDB, "Unknown database '%s'", db)
		}
		s.db = db
		return &proxy.Result{}, nil
	}
	switch strings.ToLower(sql) {
	case "select 1":
		return &proxy.Result{Columns: []proxy.Column{{Name: "1", Type: proxy.TypeInt}}, Rows: [][]proxy.Value{{int64(1)}}}, nil
	case "select mixed":
		return mixedResult(), nil
	case "select database()":
		return &proxy.Result{Columns: []proxy.Column{{Name: "database()", Type: proxy.TypeString}}, Rows: [][]proxy.Value{{s.db}}}, nil
	case "select @@version_comment limit 1":
		return &proxy.Result{Columns: []proxy.Column{{Name: "@@version_comment", Type: proxy.TypeString}}, Rows: [][]proxy.Value{{"dpproxy"}}}, nil
	case "insert":
		return &proxy.Result{AffectedRows: 3, Info: "Rows matched: 3"}, nil
	case "warn":
		return &proxy.Result{Columns: []proxy.Column{{Name: "n", Type: proxy.TypeFloat}}, Rows: [][]proxy.Value{{12.5}}, Warnings: []string{"noisy"}}, nil
	case "panic":
		panic("engine bug")
	case "sleep":
		<-ctx.Done()
		return nil, ctx.Err()
	case "bad row":
		return &proxy.Result{Columns: []proxy.Column{{Name: "n", Type: proxy.TypeInt}}, Rows: [][]proxy.Value{{"seven"}}}, nil
	}
	return nil, proxy.Errorf(proxy.CodeSyntax, "fake engine does not know %q", sql)
}

// mixedResult has one column of each type, and a row of NULLs.
func mixedResult() *proxy.Result {
	return &proxy.Result{
		Columns: []proxy.Column{
			{Name: "i", Type: proxy.TypeInt},
			{Name: "f", Type: proxy.TypeFloat},
			{Name: "s", Type: proxy.TypeString, Table: "t", Schema: "shop"},
			{Name: "n", Type: proxy.TypeNull},
			{Name: "d", Type: proxy.TypeDate},
			{Name: "dt", Type: proxy.TypeDateTime},
		},
		Rows: [][]proxy.Value{
			{int64(-42), 1234567.25, "héllo", nil, "2024-02-29", "2024-02-29 13:14:15"},
			{nil, nil, nil, nil, nil, nil},
		},
	}
}

func (s *fakeSession) Prepare(ctx context.Context, sql string) (*proxy.Prepared, error) {
	s.e.record(sql, nil)
	if strings.HasPrefix(sql, "error ") || sql == "panic" {
		_, err := s.Execute(ctx, sql)
		return nil, err
	}
	p := &proxy.Prepared{SQL: sql, ParamCount: strings.Count(sql, "?")}
	if sql == "select mixed" {
		p.Columns = mixedResult().Columns
	}
	return p, nil
}

// ExecutePrepared echoes the arguments back, one column each, typed by
// their Go type.
func (s *fakeSession) ExecutePrepared(ctx context.Context, p *proxy.Prepared, args []proxy.Value) (*proxy.Result, error) {
	s.e.record(p.SQL, args)
	if p.SQL == "select mixed" {
		return mixedResult(), nil
	}
	r := &proxy.Result{Columns: make([]proxy.Column, len(args)), Rows: [][]proxy.Value{args}}
	for i, a := range args {
		t := proxy.TypeString
		switch a.(type) {
		case int64:
			t = proxy.TypeInt
		case float64:
			t = proxy.TypeFloat
		case nil:
			t = proxy.TypeNull
		}
		r.Columns[i] = proxy.Column{Name: fmt.Sprintf("p%d", i+1), Type: t}
	}
	return r, nil
}

func (s *fakeSession) Database() string { return s.db }

func (s *fakeSession) Close() {
	s.e.mu.Lock()
	s.e.closed++
	s.e.mu.Unlock()
}

const testPassword = "s3cret"

var testUsers = map[string]*policy.User{
	"alice": {Name: "alice", Password: testPassword, Role: "analyst"},
}

// startServer starts a server on a free port with the fake engine; change
// adjusts its Config.
func startServer(t testing.TB, change func(*Config)) (*Server, *engine) {
	t.Helper()
	e := &engine{t: t}
	cfg := Config{
		Addr: "127.0.0.1:0",
		LookupUser: func(name string) (*policy.User, bool) {
			u, ok := testUsers[name]
			return u, ok
		},
		Open:          e.open,
		ServerVersion: "10.11.0-dpproxy",
		Logger:        slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if change != nil {
		change(&cfg)
	}
	s, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve returned %v after Close", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return after Close")
		}
	})
	return s, e
}

// testWriter sends logs to t.Log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// dsn builds a go-sql-driver DSN for alice (or another user/password).
func dsn(s *Server, user, password, db string, params map[string]string) string {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = user, password, "tcp", s.Addr(), db
	c.InterpolateParams = false
	c.Timeout = 5 * time.Second
	c.Params = params
	c.AllowNativePasswords = true
	return c.FormatDSN()
}

func openDB(t testing.TB, s *Server, db string) *sql.DB {
	t.Helper()
	d, err := sql.Open("mysql", dsn(s, "alice", testPassword, db, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}
