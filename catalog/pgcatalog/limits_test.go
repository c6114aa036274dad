package pgcatalog

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/parser"
)

// grow is a string of 10^n bytes made by nested replace().
func grow(n int) string {
	s := "'aaaaaaaaaa'"
	for range n - 1 {
		s = "replace(" + s + ", 'a', 'aaaaaaaaaa')"
	}
	return s
}

// TestQueryLimits: catalog queries that would burn a core for minutes or
// fill the memory stop at a limit, quickly, with a LimitError, and the
// catalog answers the next query.
func TestQueryLimits(t *testing.T) {
	c := newTestCatalog(t)
	cases := []struct {
		name, sql string
		timeout   bool
	}{
		// 440 × 37 × 90 × 440 rows.
		{"4-way cross join, counted", "SELECT count(*) FROM pg_catalog.pg_attribute a, pg_catalog.pg_class b, pg_catalog.pg_type c, pg_catalog.pg_attribute d", true},
		{"4-way cross join, rare matches", "SELECT a.attname FROM pg_catalog.pg_attribute a, pg_catalog.pg_class b, pg_catalog.pg_type c, pg_catalog.pg_attribute d " +
			"WHERE (a.attnum + b.oid + c.oid + d.attnum) % 10000019 = 0", true},
		{"sorted cross join", "SELECT a.attname FROM pg_catalog.pg_attribute a, pg_catalog.pg_class b, pg_catalog.pg_type c, pg_catalog.pg_attribute d ORDER BY d.attname DESC LIMIT 1", true},
		{"too many rows", "SELECT a.attname, b.relname FROM pg_catalog.pg_attribute a, pg_catalog.pg_class b, pg_catalog.pg_type c", false},
		{"too long a value", "SELECT length(" + grow(8) + ") FROM pg_catalog.pg_class WHERE relname = 'adult'", false},
		{"too many bytes", "SELECT " + grow(6) + " FROM pg_catalog.pg_attribute a, pg_catalog.pg_class b", false},
		{"string_agg of a cross join", "SELECT string_agg(a.attname || b.relname || " + grow(3) + ", ',') FROM pg_catalog.pg_attribute a, pg_catalog.pg_class b", false},
	}
	for _, tc := range cases {
		// The size limits must be what stops their queries, even where
		// the race detector makes SQLite's callbacks slow.
		c.limits.time = MaxQueryTime
		if !tc.timeout {
			c.limits.time = time.Minute
		}
		start := time.Now()
		_, rows, err := tryRun(t, c, tc.sql)
		took := time.Since(start)
		var lim *LimitError
		if !errors.As(err, &lim) || lim.Timeout != tc.timeout {
			t.Errorf("%s: %d rows, error %v; want a LimitError (timeout %v)", tc.name, len(rows), err, tc.timeout)
		}
		if tc.timeout && took > MaxQueryTime+time.Second {
			t.Errorf("%s: stopped after %v", tc.name, took)
		}
		t.Logf("%s: %v after %v", tc.name, err, took)
		// The next query is answered.
		if _, rows := run(t, c, "SELECT relname FROM pg_catalog.pg_class WHERE relname = 'adult'"); len(rows) != 1 {
			t.Errorf("after %s: %d rows for adult", tc.name, len(rows))
		}
	}
}

// TestQueryCallerDeadline: a caller's deadline sooner than MaxQueryTime
// stops the query then.
func TestQueryCallerDeadline(t *testing.T) {
	c := newTestCatalog(t)
	stmt, _, err := parser.Parse("SELECT count(*) FROM pg_catalog.pg_attribute a, pg_catalog.pg_class b, pg_catalog.pg_type c, pg_catalog.pg_attribute d", parser.PostgreSQL)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err = c.Query(ctx, stmt, testSession)
	if took := time.Since(start); took > time.Second {
		t.Errorf("stopped after %v", took)
	}
	var lim *LimitError
	if !errors.As(err, &lim) || !lim.Timeout || lim.SQLState() != "57014" {
		t.Errorf("error %v, want the deadline's", err)
	}
}

// TestQueryWideAndConcurrent: answers wider than one pgcat_collect call,
// with repeated column names, keep their columns in order; queries run
// side by side each get their own rows.
func TestQueryWideAndConcurrent(t *testing.T) {
	c := newTestCatalog(t)
	cols, rows := run(t, c, "SELECT * FROM pg_catalog.pg_class a, pg_catalog.pg_class b, pg_catalog.pg_type t, pg_catalog.pg_attribute d "+
		"WHERE a.relname = 'adult' AND b.relname = 'pums' AND t.typname = 'int8' AND d.attrelid = a.oid AND d.attname = 'age'")
	if len(cols) <= collectChunk || len(rows) != 1 || len(rows[0]) != len(cols) {
		t.Fatalf("%d columns, %d rows", len(cols), len(rows))
	}
	var relnames []any
	for i, col := range cols {
		if col.Name == "relname" {
			relnames = append(relnames, rows[0][i])
		}
	}
	if len(relnames) != 2 || relnames[0] != "adult" || relnames[1] != "pums" {
		t.Errorf("relname columns %v", relnames)
	}
	var wg sync.WaitGroup
	for _, name := range []string{"adult", "pums", "pg_class", "pg_type"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				_, rows, err := tryRun(t, c, "SELECT relname FROM pg_catalog.pg_class WHERE relname = '"+name+"'")
				if err != nil || len(rows) != 1 || rows[0][0] != name {
					t.Errorf("%s: %v %v", name, rows, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if _, rows := run(t, c, "SELECT attname FROM pg_catalog.pg_attribute WHERE attrelid = 'adult'::regclass AND attnum > 0 ORDER BY attnum DESC"); len(rows) != 15 || !strings.EqualFold(rows[0][0].(string), "income") {
		t.Errorf("ordered answer: %v", rows)
	}
}
