package backend

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// mysqlDSN returns the DSN of the test MariaDB/MySQL that scripts/test.sh
// starts, or skips the test when there is none.
func mysqlDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("DPPROXY_TEST_MYSQL_DSN")
	if dsn == "" {
		t.Skip("DPPROXY_TEST_MYSQL_DSN is not set (scripts/test.sh sets it)")
	}
	return dsn
}

func TestMySQLTablesAndColumns(t *testing.T) {
	ctx := t.Context()
	dsn := mysqlDSN(t)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(ctx, MySQL, dsn, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() }) // after the drops below: cleanups run last first
	if b.Driver != MySQL || b.Database != cfg.DBName {
		t.Errorf("Driver, Database = %q, %q; want mysql, %q", b.Driver, b.Database, cfg.DBName)
	}

	table := fmt.Sprintf("backend_test_%d", os.Getpid())
	view := table + "_v"
	exec(t, b,
		"DROP VIEW IF EXISTS "+view,
		"DROP TABLE IF EXISTS "+table,
		"CREATE TABLE "+table+` (
			id BIGINT NOT NULL PRIMARY KEY,
			name VARCHAR(64) NOT NULL DEFAULT 'anon',
			age INT NULL,
			score DOUBLE DEFAULT NULL,
			UNIQUE KEY (name))`,
	)
	t.Cleanup(func() {
		// t.Context is already cancelled during cleanup.
		if _, err := b.DB.Exec("DROP TABLE IF EXISTS " + table); err != nil {
			t.Errorf("drop %s: %v", table, err)
		}
	})
	// Creating a view needs a privilege the test user may lack; when it
	// can, Tables must leave the view out.
	if _, err := b.DB.ExecContext(ctx, "CREATE VIEW "+view+" AS SELECT id FROM "+table); err == nil {
		t.Cleanup(func() { b.DB.Exec("DROP VIEW IF EXISTS " + view) })
	}

	tables, err := b.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(tables, table) || slices.Contains(tables, view) || !slices.IsSorted(tables) {
		t.Errorf("Tables = %q, want sorted, with %s and without the view", tables, table)
	}

	cols, err := b.Columns(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	anon := "'anon'"
	if cols[1].Default != nil && *cols[1].Default == "anon" {
		anon = "anon" // MySQL reports string defaults unquoted, MariaDB quoted
	}
	want := []ColumnInfo{
		{Name: "id", Type: "bigint", Nullable: false, Key: "PRI"},
		{Name: "name", Type: "varchar(64)", Nullable: false, Key: "UNI", Default: &anon},
		{Name: "age", Type: "int", Nullable: true},
		{Name: "score", Type: "double", Nullable: true},
	}
	for i := range cols {
		// MariaDB and MySQL 5.7 add a display width: bigint(20), int(11).
		if base, _, ok := strings.Cut(cols[i].Type, "("); ok && strings.Contains(base, "int") {
			cols[i].Type = base
		}
	}
	if !reflect.DeepEqual(cols, want) {
		t.Errorf("Columns =\n %s\nwant\n %s", describe(cols), describe(want))
	}

	if _, err := b.Columns(ctx, "no_such_table"); !errors.Is(err, ErrNoTable) {
		t.Errorf("Columns(no_such_table) error = %v, want ErrNoTable", err)
	}
}

func TestMySQLWrongPasswordIsNotShown(t *testing.T) {
	cfg, err := mysql.ParseDSN(mysqlDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Passwd = "wrong-hunter2"
	b, err := Open(t.Context(), MySQL, cfg.FormatDSN(), 1)
	if err == nil {
		b.Close()
		t.Fatal("Open with a wrong password succeeded")
	}
	if strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "Access denied") {
		t.Errorf("Open error = %v, want access denied without the password", err)
	}
}

func describe(cols []ColumnInfo) string {
	var b strings.Builder
	for _, c := range cols {
		def := "<nil>"
		if c.Default != nil {
			def = *c.Default
		}
		fmt.Fprintf(&b, "{%s %s null=%v key=%q default=%s} ", c.Name, c.Type, c.Nullable, c.Key, def)
	}
	return b.String()
}
