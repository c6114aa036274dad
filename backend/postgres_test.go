package backend

import (
	"os"
	"testing"
)

// The PostgreSQL metadata, against the server scripts/test.sh starts with
// the sample data loaded.
func TestPostgresTablesAndColumns(t *testing.T) {
	dsn := os.Getenv("DPPROXY_TEST_PG_DSN")
	if dsn == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI needs DPPROXY_TEST_PG_DSN (scripts/test.sh sets it)")
		}
		t.Skip("DPPROXY_TEST_PG_DSN is not set (scripts/test.sh starts PostgreSQL)")
	}
	b, err := Open(t.Context(), Postgres, dsn, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Database != "public" {
		t.Errorf("schema %q, want public", b.Database)
	}
	tables, err := b.Tables(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, n := range tables {
		have[n] = true
	}
	if !have["adult"] || !have["pums"] {
		t.Fatalf("tables %v, want adult and pums", tables)
	}
	cols, err := b.Columns(t.Context(), "adult")
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) != 15 || cols[0].Name != "age" || cols[0].Type != "bigint" || cols[0].Nullable {
		t.Errorf("adult columns: %+v", cols)
	}
	if _, err := b.Columns(t.Context(), "nosuchtable"); err == nil {
		t.Error("columns of a missing table: no error")
	}
}

func TestRedactPostgres(t *testing.T) {
	for dsn, want := range map[string]string{
		"postgres://u:secret@h:5432/db?sslmode=disable": "postgres://u@h:5432/db?sslmode=disable",
		"host=h password=secret user=u":                 "host=h user=u",
	} {
		if got := redactPostgres(dsn); got != want {
			t.Errorf("redactPostgres(%q) = %q, want %q", dsn, got, want)
		}
	}
}
