// Package integration drives dpproxy end to end: a real server, real
// backends (the demo's SQLite, and MariaDB when scripts/test.sh started one),
// and real clients (go-sql-driver/mysql, the mariadb CLI, pymysql,
// SQLAlchemy).
package integration

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/lib/pq"

	"github.com/dpproxy/dpproxy/demo"
	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/server"
)

// target is one running dpproxy and a direct connection to its backend, for
// computing exact answers to compare with.
type target struct {
	name    string
	addr    string // the proxy's MySQL front door
	pgAddr  string // the proxy's PostgreSQL front door
	db      string // database clients use
	direct  *sql.DB
	srv     *server.Server
	dataDir string
	pol     *policy.Policy
}

// Test users: "tester" has a budget large enough for accuracy checks at
// large ε; each budget test uses its own user so tests don't share spend.
const testerPassword = "tester-pw"

func testPolicy(driver, dsn, dataDir string) (*policy.Policy, error) {
	pol, err := demo.Policy(demo.Options{MySQLListen: "127.0.0.1:0", PGListen: "127.0.0.1:0", AdminListen: "127.0.0.1:0", DataDir: dataDir})
	if err != nil {
		return nil, err
	}
	pol.Backend.Driver, pol.Backend.DSN = driver, dsn
	// A short response quantum keeps the suite fast; it still runs the
	// quantum's code on every charged answer (sidechannel_test.go checks it).
	pol.Limits.ResponseQuantum.Duration = 20 * time.Millisecond
	pol.Roles["tester"] = &policy.Role{Budget: policy.Budget{Epsilon: 1e9, Delta: 0.5}}
	pol.Roles["small"] = &policy.Role{Budget: policy.Budget{Epsilon: 3, Delta: 1e-5}, MaxEpsilonPerQuery: 1}
	pol.Users["tester"] = &policy.User{Password: testerPassword, Role: "tester"}
	pol.Users["multistmt"] = &policy.User{Password: "multistmt", Role: "tester"} // its own spend, read by TestPGMultiStatement
	for _, u := range []string{"budget1", "budget2", "budget3", "restart"} {
		pol.Users[u] = &policy.User{Password: u, Role: "small"}
	}
	visitsTable(pol)
	return pol, pol.Validate()
}

var targets []*target

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "dpproxy-it-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: testLogLevel()}))

	// The demo: embedded SQLite with the sample data.
	sqliteDir := filepath.Join(tmp, "sqlite")
	pol, err := testPolicy("sqlite", filepath.Join(sqliteDir, "demo.db"), sqliteDir)
	if err != nil {
		return 0, err
	}
	if err := demo.Prepare(ctx, pol); err != nil {
		return 0, err
	}
	direct, err := sql.Open("sqlite", pol.Backend.DSN)
	if err != nil {
		return 0, err
	}
	if err := createVisits(ctx, direct, "sqlite"); err != nil {
		return 0, err
	}
	srv, err := server.Start(ctx, server.Options{Policy: pol, Logger: log, Database: demo.Database})
	if err != nil {
		return 0, err
	}
	targets = append(targets, &target{name: "sqlite", addr: srv.MySQLAddr(), pgAddr: srv.PostgresAddr(), db: demo.Database, direct: direct, srv: srv, dataDir: sqliteDir, pol: pol})

	// MariaDB, when scripts/test.sh started one. CI always does.
	if dsn := os.Getenv("DPPROXY_TEST_MYSQL_DSN"); dsn != "" {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return 0, err
		}
		mdir := filepath.Join(tmp, "mariadb")
		pol, err := testPolicy("mysql", dsn, mdir)
		if err != nil {
			return 0, err
		}
		direct, err := sql.Open("mysql", dsn)
		if err != nil {
			return 0, err
		}
		if err := createVisits(ctx, direct, "mysql"); err != nil {
			return 0, err
		}
		srv, err := server.Start(ctx, server.Options{Policy: pol, Logger: log})
		if err != nil {
			return 0, err
		}
		targets = append(targets, &target{name: "mariadb", addr: srv.MySQLAddr(), pgAddr: srv.PostgresAddr(), db: cfg.DBName, direct: direct, srv: srv, dataDir: mdir, pol: pol})
	} else if os.Getenv("CI") != "" {
		return 0, fmt.Errorf("CI is set but DPPROXY_TEST_MYSQL_DSN is not: run the tests through scripts/test.sh")
	}

	// PostgreSQL as the backend, when scripts/test.sh started one.
	if dsn := os.Getenv("DPPROXY_TEST_PG_DSN"); dsn != "" {
		pdir := filepath.Join(tmp, "postgres")
		pol, err := testPolicy("postgres", dsn, pdir)
		if err != nil {
			return 0, err
		}
		const db = "census"
		direct, err := sql.Open("postgres", dsn)
		if err != nil {
			return 0, err
		}
		if err := createVisits(ctx, direct, "postgres"); err != nil {
			return 0, err
		}
		srv, err := server.Start(ctx, server.Options{Policy: pol, Logger: log, Database: db})
		if err != nil {
			return 0, err
		}
		targets = append(targets, &target{name: "postgres", addr: srv.MySQLAddr(), pgAddr: srv.PostgresAddr(), db: db, direct: direct, srv: srv, dataDir: pdir, pol: pol})
	} else if os.Getenv("CI") != "" {
		return 0, fmt.Errorf("CI is set but DPPROXY_TEST_PG_DSN is not: run the tests through scripts/test.sh")
	}
	code := m.Run()
	for _, t := range targets {
		t.srv.Close()
		t.direct.Close()
	}
	return code, nil
}

// forEach runs a subtest against every target.
func forEach(t *testing.T, fn func(t *testing.T, tg *target)) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) { fn(t, tg) })
	}
}

// connect opens a go-sql-driver connection pool to the proxy.
func (tg *target) connect(t testing.TB, user, password string, params ...string) *sql.DB {
	t.Helper()
	dsn := fmt.Sprintf("%s:%s@tcp(%s)/%s", user, password, tg.addr, tg.db)
	if len(params) > 0 {
		dsn += "?" + strings.Join(params, "&")
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetConnMaxLifetime(time.Minute)
	t.Cleanup(func() { db.Close() })
	return db
}

// session returns one pinned connection: SET applies to it only.
func (tg *target) session(t testing.TB, user, password string, params ...string) *sql.Conn {
	t.Helper()
	conn, err := tg.connect(t, user, password, params...).Conn(context.Background())
	if err != nil {
		t.Fatalf("connecting to %s as %s: %v", tg.name, user, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func mustExec(t testing.TB, c *sql.Conn, q string) {
	t.Helper()
	if _, err := c.ExecContext(context.Background(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// queryRows runs q and returns every row as strings (NULL as "NULL").
func queryRows(t testing.TB, c interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, q string, args ...any) ([]string, [][]string) {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for rows.Next() {
		raw := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range raw {
			ptrs[i] = &raw[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, r := range raw {
			row[i] = "NULL"
			if r.Valid {
				row[i] = r.String
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return cols, out
}

// mysqlError runs q expecting a MySQL error and returns it.
func mysqlError(t testing.TB, c *sql.Conn, q string, args ...any) *mysql.MySQLError {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), q, args...)
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	if err == nil {
		t.Fatalf("%s: expected an error, got none", q)
	}
	me, ok := err.(*mysql.MySQLError)
	if !ok {
		t.Fatalf("%s: expected a MySQL error, got %T %v", q, err, err)
	}
	return me
}

// testLogLevel is warn, or debug with DPPROXY_TEST_DEBUG=1 (every failed
// statement is then logged with its SQL).
func testLogLevel() slog.Level {
	if os.Getenv("DPPROXY_TEST_DEBUG") != "" {
		return slog.LevelDebug
	}
	return slog.LevelWarn
}
