package rewrite

import (
	"testing"

	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
)

// FuzzAnalyze checks that no statement the parsers accept panics the
// analysis — joins, derived tables, dates and all — and that every plan it
// returns has backend SQL and an aggregate. The seed corpus is in
// testdata/fuzz/FuzzAnalyze; run with
//
//	go test ./rewrite -run '^$' -fuzz FuzzAnalyze -fuzztime 1m
func FuzzAnalyze(f *testing.F) {
	for _, sql := range []string{
		"SELECT sex, COUNT(*), AVG(age), MEDIAN(income) FROM pums WHERE age > ? GROUP BY sex HAVING COUNT(*) > 3 ORDER BY 2 LIMIT 5",
		"SELECT q.region, SUM(p.income) FROM pums p LEFT JOIN persons q ON p.pid = q.person_id AND p.age > 3 GROUP BY q.region",
		"SELECT COUNT(*) FROM pums p JOIN persons q ON p.pid = q.person_id LEFT JOIN pums r USING (pid) WHERE r.age > 1",
		"SELECT AVG(t), MAX(n) FROM (SELECT pid, SUM(income) AS t, COUNT(*) AS n FROM pums GROUP BY pid HAVING COUNT(*) > 1) d",
		"WITH v AS (SELECT age * 2 AS a FROM adult WHERE sex = 'Male') SELECT COUNT(DISTINCT a) FROM v",
		"SELECT YEAR(admitted), AVG(discharged - admitted) FROM visits GROUP BY 1",
		"SELECT sex, COUNT(DISTINCT age), PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY age) FROM pums GROUP BY sex",
	} {
		f.Add(sql, false)
	}
	f.Add("SELECT EXTRACT(MONTH FROM admitted) AS m, SUM(cost) FROM visits GROUP BY m", true)
	pol, err := policy.Parse([]byte(testPolicy))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, sql string, pg bool) {
		d := parser.MySQL
		if pg {
			d = parser.PostgreSQL
		}
		stmt, _, err := parser.Parse(sql, d)
		if err != nil {
			return
		}
		sel, ok := stmt.(*parser.Select)
		if !ok {
			return
		}
		for _, backend := range []parser.Dialect{parser.MySQL, parser.PostgreSQL, parser.SQLite} {
			p, err := Analyze(Input{Select: sel, Policy: pol, Schema: testSchema, Database: "demo", Dialect: backend, Params: []any{int64(1), "x"}})
			if err != nil {
				continue
			}
			if p.SQL == "" || len(p.Aggs) == 0 {
				t.Fatalf("Analyze(%q) gave a plan without SQL or aggregates: %+v", sql, p)
			}
		}
	})
}
