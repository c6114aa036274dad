package integration

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/lib/pq"

	"github.com/dpproxy/dpproxy/server"
)

// Metabase, Superset, Tableau and DBeaver qualify every data query with the
// schema the catalog advertises, public, whatever the backend (issue 12,
// item 2): through the PostgreSQL door, public.adult is adult on SQLite,
// MariaDB and PostgreSQL alike; another schema is an unknown relation.
func TestPostgresDoorServesSchemaPublic(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		c := tg.pgSession(t, "tester", testerPassword)
		for _, q := range []string{
			"SELECT count(*) FROM public.adult",
			`SELECT count(*) FROM "public"."adult" WHERE age > 30`,
			"SELECT level, count(*) FROM public.education_levels GROUP BY level",
			"SELECT p.sex, count(*) FROM public.pums_person p JOIN public.pums v ON p.pid = v.pid GROUP BY p.sex",
		} {
			if _, rows := queryRows(t, c, q); len(rows) == 0 {
				t.Errorf("%s: no rows", q)
			}
		}
		_, err := c.QueryContext(context.Background(), "SELECT count(*) FROM other.adult")
		var pe *pq.Error
		if !errors.As(err, &pe) || pe.Code != "42P01" {
			t.Errorf("a table in another schema: %v, want 42P01", err)
		}
	})
}

// With a PostgreSQL backend, clients name the backend's database (census),
// not its schema; both doors serve it under that name.
func TestPostgresBackendIsServedUnderItsDatabaseName(t *testing.T) {
	dsn := os.Getenv("DPPROXY_TEST_PG_DSN")
	if dsn == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI needs DPPROXY_TEST_PG_DSN")
		}
		t.Skip("needs PostgreSQL (scripts/test.sh starts one)")
	}
	pol, err := testPolicy("postgres", dsn, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// No Database option: the name comes from the backend.
	srv, err := server.Start(context.Background(), server.Options{Policy: pol, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var name string
	direct, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	if err := direct.QueryRow("SELECT current_database()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	tg := &target{name: "postgres", addr: srv.MySQLAddr(), pgAddr: srv.PostgresAddr(), db: name}
	pg := tg.pgSession(t, "tester", testerPassword)
	if _, rows := queryRows(t, pg, "SELECT count(*) FROM public.adult"); len(rows) != 1 {
		t.Errorf("PostgreSQL door, dbname=%s: %v", name, rows)
	}
	my := tg.session(t, "tester", testerPassword)
	if _, rows := queryRows(t, my, fmt.Sprintf("SELECT COUNT(*) FROM %s.adult", name)); len(rows) != 1 {
		t.Errorf("MySQL door, database %s: %v", name, rows)
	}
	_, rows := queryRows(t, my, "SELECT DATABASE()")
	if rows[0][0] != name {
		t.Errorf("DATABASE() = %v, want %s", rows, name)
	}
}
