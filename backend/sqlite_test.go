package backend

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func openTestSQLite(t *testing.T, dsn string) *Backend {
	t.Helper()
	b, err := Open(t.Context(), SQLite, dsn, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func exec(t *testing.T, b *Backend, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := b.DB.ExecContext(t.Context(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func TestSQLiteTablesAndColumns(t *testing.T) {
	ctx := t.Context()
	b := openTestSQLite(t, filepath.Join(t.TempDir(), "meta.db"))
	if b.Driver != SQLite || b.Database != "main" {
		t.Errorf("Driver, Database = %q, %q; want sqlite, main", b.Driver, b.Database)
	}
	exec(t, b,
		`CREATE TABLE people (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL DEFAULT 'anon', age INT, score REAL DEFAULT NULL)`,
		`CREATE TABLE "odd ""name""" (x)`,
		`CREATE VIEW adults AS SELECT * FROM people WHERE age >= 18`,
		`CREATE INDEX people_age ON people (age)`,
		`INSERT INTO people (name, age) VALUES ('a', 30)`, // creates sqlite_sequence
	)

	tables, err := b.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`odd "name"`, "people"}; !reflect.DeepEqual(tables, want) {
		t.Errorf("Tables = %q, want %q (no views, no sqlite_ tables)", tables, want)
	}

	cols, err := b.Columns(ctx, "people")
	if err != nil {
		t.Fatal(err)
	}
	anon := "'anon'"
	want := []ColumnInfo{
		{Name: "id", Type: "INTEGER", Nullable: true, Key: "PRI"},
		{Name: "name", Type: "TEXT", Nullable: false, Default: &anon},
		{Name: "age", Type: "INT", Nullable: true},
		{Name: "score", Type: "REAL", Nullable: true},
	}
	if !reflect.DeepEqual(cols, want) {
		t.Errorf("Columns(people) =\n %+v\nwant\n %+v", cols, want)
	}

	cols, err = b.Columns(ctx, `odd "name"`)
	if err != nil || len(cols) != 1 || cols[0].Name != "x" || cols[0].Type != "" {
		t.Errorf(`Columns(odd "name") = %+v, %v`, cols, err)
	}

	_, err = b.Columns(ctx, "missing")
	if !errors.Is(err, ErrNoTable) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Columns(missing) error = %v, want ErrNoTable naming the table", err)
	}
}

func TestSQLitePragmas(t *testing.T) {
	ctx := t.Context()
	b := openTestSQLite(t, filepath.Join(t.TempDir(), "p.db"))
	var mode string
	var timeout int
	if err := b.DB.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if err := b.DB.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&timeout); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" || timeout != busyTimeoutMillis {
		t.Errorf("journal_mode = %q, busy_timeout = %d; want wal, %d", mode, timeout, busyTimeoutMillis)
	}

	// A DSN that chooses its own journal mode and timeout keeps them.
	b = openTestSQLite(t, filepath.Join(t.TempDir(), "q.db")+"?_pragma=journal_mode(DELETE)&_timeout=1234")
	if err := b.DB.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if err := b.DB.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&timeout); err != nil {
		t.Fatal(err)
	}
	if mode != "delete" || timeout != 1234 {
		t.Errorf("journal_mode = %q, busy_timeout = %d; want the DSN's delete, 1234", mode, timeout)
	}
}

// TestSQLiteMemoryIsOneDatabase checks that a private in-memory database is
// one database for the whole pool: with several connections, a table created
// on one would be missing on the others.
func TestSQLiteMemoryIsOneDatabase(t *testing.T) {
	ctx := t.Context()
	b := openTestSQLite(t, ":memory:")
	exec(t, b, "CREATE TABLE t (x INT)")
	// Hold one connection busy: a pool of more would open another
	// connection, to a new and empty database, for the next query.
	conn, err := b.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	tables, err := b.Tables(wait)
	if err == nil && !reflect.DeepEqual(tables, []string{"t"}) {
		t.Errorf("a second connection saw tables %q, want [t]", tables)
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	conn.Close()
	tables, err = b.Tables(ctx)
	if err != nil || !reflect.DeepEqual(tables, []string{"t"}) {
		t.Errorf("Tables = %v, %v; want [t]", tables, err)
	}
	if got := b.DB.Stats().MaxOpenConnections; got != 1 {
		t.Errorf("MaxOpenConnections = %d, want 1", got)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		driver, dsn string
		want        string
	}{
		{"postgres", "postgres://u:hunter2@127.0.0.1:1/db?sslmode=disable", "connect to postgres postgres://u@127.0.0.1:1/db"},
		{"postgres", "host=127.0.0.1 port=1 user=u password=hunter2 dbname=db sslmode=disable", "connect to postgres host=127.0.0.1 port=1 user=u dbname=db"},
		{"oracle", "x", `unknown driver "oracle"`},
		{"sqlite", "", "sqlite DSN is empty"},
		{"mysql", "u:hunter2@tcp(127.0.0.1:1)/", "names no database"},
		{"mysql", "u:hunter2@tcp(127.0.0.1:1)/db", "connect to mysql u@tcp(127.0.0.1:1)/db"},
		{"sqlite", filepath.Join(t.TempDir(), "no", "such", "dir.db"), "connect to sqlite"},
	}
	for _, tt := range tests {
		b, err := Open(ctx, tt.driver, tt.dsn, 0)
		if err == nil {
			b.Close()
			t.Errorf("Open(%s, %s) succeeded", tt.driver, tt.dsn)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open(%s, %s) error = %v, want it to contain %q", tt.driver, tt.dsn, err, tt.want)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Open(%s) error shows the password: %v", tt.driver, err)
		}
	}
}

func TestOpenHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	// 192.0.2.1 (TEST-NET-1, RFC 5737) never answers; only the context can
	// end the ping.
	b, err := Open(ctx, MySQL, "u:p@tcp(192.0.2.1:3306)/db", 0)
	if err == nil {
		b.Close()
		t.Fatal("Open with a cancelled context succeeded")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Open error = %v, want context.Canceled", err)
	}
}
