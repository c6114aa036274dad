package integration

import (
	"context"
	"database/sql"
	"reflect"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/policy"
)

// columnsOf runs q and returns its column names and database type names,
// and how many rows it returned.
func columnsOf(t *testing.T, c interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, q string, args ...any) (names, types []string, nrows int) {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range cts {
		names = append(names, ct.Name())
		types = append(types, ct.DatabaseTypeName())
	}
	for rows.Next() {
		nrows++
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return names, types, nrows
}

// TestColumnNamesAsTheEngineNamesThem: result columns carry the names the
// client's own server gives them (issue 12, item 5): MariaDB names a column
// reference by the column (`adult`.`sex` is "sex") and an expression by its
// text; PostgreSQL a column by its name, a call by the function's name,
// anything else "?column?". Checked against the backend itself where the
// backend speaks the door's dialect, and against the names those servers
// give (seen on MariaDB 10.11 and PostgreSQL 17) everywhere.
func TestColumnNamesAsTheEngineNamesThem(t *testing.T) {
	tests := []struct {
		door  string // "mysql" or "pg"
		query string
		want  []string
	}{
		// Public table: forwarded to the backend.
		{"mysql", "SELECT `education_levels`.`level`, `level`, education_levels.years, COUNT(*), `years` + 1, 'x', level AS L FROM education_levels GROUP BY level, years ORDER BY 1, 3",
			[]string{"level", "level", "years", "COUNT(*)", "`years` + 1", "x", "L"}},
		{"pg", `SELECT "education_levels"."level", "level", education_levels.years, COUNT(*), years + 1, CASE WHEN years > 1 THEN 1 END, level AS "L" FROM education_levels GROUP BY level, years ORDER BY 1, 3`,
			[]string{"level", "level", "years", "count", "?column?", "case", "L"}},
		// Private table: the DP path.
		{"mysql", "SELECT `sex`, `adult`.`sex`, COUNT(*), AVG(`age`), COUNT(*) AS n FROM adult GROUP BY `sex` ORDER BY 1",
			[]string{"sex", "sex", "COUNT(*)", "AVG(`age`)", "n"}},
		{"pg", `SELECT "sex", "adult"."sex", COUNT(*), avg("age"), COUNT(*) AS n FROM adult GROUP BY "sex" ORDER BY 1`,
			[]string{"sex", "sex", "count", "avg", "n"}},
	}
	forEach(t, func(t *testing.T, tg *target) {
		my := tg.session(t, "tester", testerPassword)
		pg := tg.pgSession(t, "tester", testerPassword)
		mustExec(t, my, "SET dp_epsilon = 1")
		mustExec(t, pg, "SET dp_epsilon = 1")
		for _, tc := range tests {
			c := my
			if tc.door == "pg" {
				c = pg
			}
			got, _, _ := columnsOf(t, c, tc.query)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s door: %s\n  columns %q\n  want    %q", tc.door, tc.query, got, tc.want)
			}
			if (tc.door == "mysql" && tg.name == "mariadb") || (tc.door == "pg" && tg.name == "postgres") {
				direct, _, _ := columnsOf(t, tg.direct, tc.query)
				if !reflect.DeepEqual(got, direct) {
					t.Errorf("%s door: %s\n  columns %q\n  %s names them %q", tc.door, tc.query, got, tg.name, direct)
				}
			}
		}
	})
}

// TestMetadataProbesAreAnsweredEmptyAndFree: a statement over a private
// table that returns no rows whatever the data (LIMIT 0, a constant-false
// WHERE) is answered with its columns, typed from the policy, and no rows,
// without a charge (issue 12, item 7).
func TestMetadataProbesAreAnsweredEmptyAndFree(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		allNames, _, _ := columnsOf(t, tg.direct, "SELECT * FROM adult LIMIT 0")
		adult := tg.pol.Tables["adult"]
		doors := []struct {
			name   string
			conn   *sql.Conn
			quote  func(string) string
			param  string
			typeOf map[policy.ColumnType]string
			count  string
		}{
			{"mysql door", tg.session(t, "tester", testerPassword), func(s string) string { return "`" + s + "`" }, "?",
				map[policy.ColumnType]string{policy.TypeInt: "BIGINT", policy.TypeString: "VARCHAR", policy.TypeFloat: "DOUBLE", policy.TypeDate: "DATE"}, "COUNT(*)"},
			{"postgres door", tg.pgSession(t, "tester", testerPassword), func(s string) string { return `"` + s + `"` }, "$1",
				map[policy.ColumnType]string{policy.TypeInt: "INT8", policy.TypeString: "TEXT", policy.TypeFloat: "FLOAT8", policy.TypeDate: "DATE"}, "count"},
		}
		for _, door := range doors {
			t.Run(door.name, func(t *testing.T) {
				spent := spentOn(t, door.conn)
				before := spent()
				typesOf := func(cols []string) []string {
					out := make([]string, len(cols))
					for i, c := range cols {
						pc, ok := adult.Column(c)
						if !ok {
							t.Fatalf("adult.%s is not in the policy", c)
						}
						out[i] = door.typeOf[pc.Type]
					}
					return out
				}
				probes := []struct {
					query string
					args  []any
					names []string
					types []string
				}{
					{"SELECT * FROM adult LIMIT 0", nil, allNames, typesOf(allNames)},
					{"SELECT * FROM adult LIMIT 0 OFFSET 100", nil, allNames, typesOf(allNames)},
					{"SELECT * FROM adult LIMIT " + door.param, []any{0}, allNames, typesOf(allNames)},
					{"SELECT age, sex FROM adult WHERE 1=0", nil, []string{"age", "sex"}, typesOf([]string{"age", "sex"})},
					{"SELECT " + door.quote("adult") + "." + door.quote("age") + ", sex AS s FROM adult WHERE FALSE", nil, []string{"age", "s"}, typesOf([]string{"age", "sex"})},
					{"SELECT a.age FROM adult AS a WHERE 1<>1", nil, []string{"age"}, typesOf([]string{"age"})},
					{"SELECT age FROM adult WHERE age > 30 AND 1 = 0", nil, []string{"age"}, typesOf([]string{"age"})},
					{"SELECT age FROM adult WHERE NULL", nil, []string{"age"}, typesOf([]string{"age"})},
					{"SELECT sex, COUNT(*) FROM adult WHERE 1=0 GROUP BY sex", nil, []string{"sex", door.count}, []string{door.typeOf[policy.TypeString], door.typeOf[policy.TypeInt]}},
					{"SELECT COUNT(*) FROM adult LIMIT 0", nil, []string{door.count}, []string{door.typeOf[policy.TypeInt]}},
				}
				for _, p := range probes {
					names, types, n := columnsOf(t, door.conn, p.query, p.args...)
					if n != 0 {
						t.Errorf("%s: %d rows, want none", p.query, n)
					}
					if len(p.args) > 0 && door.name == "postgres door" {
						// lib/pq takes the columns from the statement's
						// Describe, answered before the parameters are
						// known (issue 12, item 6).
						continue
					}
					if !reflect.DeepEqual(names, p.names) {
						t.Errorf("%s: columns %q, want %q", p.query, names, p.names)
					}
					if !reflect.DeepEqual(types, p.types) {
						t.Errorf("%s: types %q, want %q", p.query, types, p.types)
					}
				}
				if after := spent(); after != before {
					t.Errorf("the probes were charged: ε %g → %g", before, after)
				}
				// Not provably empty: still a row read, still refused.
				for _, q := range []string{"SELECT age FROM adult LIMIT 1", "SELECT age FROM adult WHERE 1=1", "SELECT age FROM adult WHERE 1 = 0 OR age = 1000"} {
					if _, err := door.conn.QueryContext(context.Background(), q); err == nil || !strings.Contains(strings.ToLower(err.Error()), "refused") {
						t.Errorf("%s: %v, want a refusal", q, err)
					}
				}
			})
		}
	})
}
