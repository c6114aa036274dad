package pgwire

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/proxy"
)

// engine is a fake of the proxy engine: it answers a fixed set of
// statements and records everything that reaches it.
type engine struct {
	t testing.TB // nil: do not log

	mu       sync.Mutex
	opened   []string // "user/database/application_name" per Open
	closed   int
	received []string // SQL text per Execute/Prepare/ExecutePrepared
	args     [][]proxy.Value
	// started is signalled when a "sleep" statement starts waiting.
	started chan struct{}
}

func (e *engine) open(ctx context.Context, user, database string, params map[string]string) (Session, error) {
	if database == "nope" {
		return nil, proxy.Errorf(proxy.CodeUnknownDB, "database %q does not exist", database)
	}
	e.mu.Lock()
	e.opened = append(e.opened, user+"/"+database+"/"+params["application_name"])
	e.mu.Unlock()
	return &fakeSession{e: e, user: user, db: database}, nil
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
	"prepare":     proxy.CodeSyntax, // fails at Prepare when prepared
}

// mixedColumns has one column of every engine type.
var mixedColumns = []proxy.Column{
	{Name: "i", Type: proxy.TypeInt},
	{Name: "f", Type: proxy.TypeFloat},
	{Name: "s", Type: proxy.TypeString},
	{Name: "d", Type: proxy.TypeDate},
	{Name: "ts", Type: proxy.TypeDateTime},
	{Name: "n", Type: proxy.TypeNull},
}

func mixedResult() *proxy.Result {
	return &proxy.Result{Columns: mixedColumns, Rows: [][]proxy.Value{
		{int64(-42), 1234567.0, "héllo", "2024-02-29", "2024-02-29 13:14:15.5", nil},
		{nil, nil, nil, nil, nil, nil},
	}}
}

// Split cuts as the engine does, with PostgreSQL's parser.
func (s *fakeSession) Split(sql string) ([]string, error) {
	stmts, err := parser.SplitPG(sql)
	if err != nil {
		return nil, proxy.Errorf(proxy.CodeSyntax, "%v", err)
	}
	return stmts, nil
}

func (s *fakeSession) Execute(ctx context.Context, sql string) (*proxy.Result, error) {
	return s.run(ctx, sql, nil)
}

func (s *fakeSession) run(ctx context.Context, sql string, args []proxy.Value) (*proxy.Result, error) {
	s.e.record(sql, args)
	if s.e.t != nil {
		s.e.t.Logf("engine got %q %v", sql, args)
	}
	if name, ok := strings.CutPrefix(sql, "error "); ok {
		// pgx's simple protocol inlines the parameter: "error x 1".
		name, _, _ = strings.Cut(name, " ")
		if name == "plain" {
			return nil, fmt.Errorf("something broke")
		}
		return nil, proxy.Errorf(errorStatements[name], "failed: %s", name)
	}
	if text, ok := strings.CutPrefix(sql, "select echo "); ok {
		return &proxy.Result{Columns: []proxy.Column{{Name: "echo", Type: proxy.TypeString}}, Rows: [][]proxy.Value{{text}}}, nil
	}
	switch strings.ToLower(sql) {
	case "select fail":
		return nil, proxy.Errorf(proxy.CodeRefused, "failed: refused")
	case "select 1":
		return &proxy.Result{Columns: []proxy.Column{{Name: "?column?", Type: proxy.TypeInt}}, Rows: [][]proxy.Value{{int64(1)}}}, nil
	case "select mixed", "select known":
		return mixedResult(), nil
	case "select many":
		r := &proxy.Result{Columns: []proxy.Column{{Name: "n", Type: proxy.TypeInt}}}
		for i := range 10 {
			r.Rows = append(r.Rows, []proxy.Value{int64(i)})
		}
		return r, nil
	case "select args":
		r := &proxy.Result{Columns: []proxy.Column{{Name: "arg", Type: proxy.TypeString}}}
		for _, a := range args {
			r.Rows = append(r.Rows, []proxy.Value{fmt.Sprintf("%T %v", a, a)})
		}
		return r, nil
	case "set x":
		return &proxy.Result{Info: "SET"}, nil
	case "begin":
		return &proxy.Result{Info: "BEGIN"}, nil
	case "commit":
		return &proxy.Result{Info: "COMMIT"}, nil
	case "warn":
		return &proxy.Result{Columns: []proxy.Column{{Name: "n", Type: proxy.TypeFloat}}, Rows: [][]proxy.Value{{12.5}}, Warnings: []string{"noisy"}}, nil
	case "panic":
		panic("engine bug")
	case "sleep":
		if s.e.started != nil {
			s.e.started <- struct{}{}
		}
		<-ctx.Done()
		return nil, ctx.Err()
	case "bad row":
		return &proxy.Result{Columns: []proxy.Column{{Name: "n", Type: proxy.TypeInt}}, Rows: [][]proxy.Value{{"seven"}}}, nil
	case "-- ping":
		return &proxy.Result{}, nil
	}
	return nil, proxy.Errorf(proxy.CodeSyntax, "syntax error at or near %q", sql)
}

// Prepare counts "$" as parameters; "select known" announces its columns,
// everything else leaves them to execution.
func (s *fakeSession) Prepare(ctx context.Context, sql string) (*proxy.Prepared, error) {
	s.e.record("prepare "+sql, nil)
	if strings.HasPrefix(sql, "error prepare") {
		return nil, proxy.Errorf(proxy.CodeSyntax, "syntax error in %q", sql)
	}
	if sql == "panic" {
		panic("engine bug in prepare")
	}
	p := &proxy.Prepared{SQL: sql, ParamCount: strings.Count(sql, "$")}
	if strings.HasPrefix(sql, "select known") {
		p.Columns = mixedColumns
	}
	return p, nil
}

func (s *fakeSession) ExecutePrepared(ctx context.Context, p *proxy.Prepared, args []proxy.Value) (*proxy.Result, error) {
	if len(args) != p.ParamCount {
		return nil, proxy.Errorf(proxy.CodeBadValue, "statement expects %d parameters, got %d", p.ParamCount, len(args))
	}
	sql, _, _ := strings.Cut(p.SQL, " $")
	if args == nil {
		args = []proxy.Value{}
	}
	return s.run(ctx, sql, args)
}

func (s *fakeSession) Database() string { return s.db }

func (s *fakeSession) Close() {
	s.e.mu.Lock()
	s.e.closed++
	s.e.mu.Unlock()
}

// Test users: alice has a plain password (so a derived SCRAM verifier),
// bob a SCRAM hash only, carol a MySQL native hash only (cleartext over
// TLS is her only way in).
const (
	alicePassword = "alice-secret"
	bobPassword   = "bob-secret"
	carolPassword = "carol-secret"
)

func testUsers(t testing.TB) map[string]*policy.User {
	_, bobSCRAM, err := policy.HashPassword(bobPassword)
	if err != nil {
		t.Fatal(err)
	}
	carolNative, _, err := policy.HashPassword(carolPassword)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*policy.User{
		"alice": {Name: "alice", Password: alicePassword, Role: "analyst"},
		"bob":   {Name: "bob", PasswordHashes: []string{bobSCRAM}, Role: "analyst"},
		"carol": {Name: "carol", PasswordHashes: []string{carolNative}, Role: "analyst"},
	}
}

// startServer starts a server on a free port with the fake engine.
func startServer(t testing.TB, opts ...func(*Config)) (*Server, *engine) {
	t.Helper()
	e := &engine{t: t}
	users := testUsers(t)
	cfg := Config{
		Addr:       "127.0.0.1:0",
		LookupUser: func(name string) (*policy.User, bool) { u, ok := users[name]; return u, ok },
		Open:       e.open,
		Logger:     slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, o := range opts {
		o(&cfg)
	}
	s, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve() }()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after Close")
		}
	})
	return s, e
}

// testWriter sends logs to t.Log, so they show only for failing tests.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// withTLS configures TLS with a fresh self-signed certificate.
func withTLS(t testing.TB) func(*Config) {
	cert := selfSigned(t)
	return func(c *Config) {
		c.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
}
