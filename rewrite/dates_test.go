package rewrite

import (
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/parser"
)

func TestDateDifferenceInsideAggregates(t *testing.T) {
	for _, tc := range []struct {
		dialect parser.Dialect
		diff    string
	}{
		// The dates are clamped to their bounds first (total.go).
		{parser.MySQL, "DATEDIFF((CASE WHEN `discharged` < DATE '2015-01-01' THEN DATE '2015-01-01' WHEN `discharged` > DATE '2025-03-31' THEN DATE '2025-03-31' ELSE `discharged` END), (CASE WHEN `admitted` < DATE '2015-01-01'"},
		{parser.PostgreSQL, `((CASE WHEN "discharged" < DATE '2015-01-01' THEN DATE '2015-01-01' WHEN "discharged" > DATE '2025-03-31' THEN DATE '2025-03-31' ELSE "discharged" END) - (CASE WHEN "admitted" < DATE '2015-01-01'`},
		{parser.SQLite, `CAST(julianday((CASE WHEN "discharged" < '2015-01-01' THEN '2015-01-01' WHEN "discharged" > '2025-03-31' THEN '2025-03-31' ELSE "discharged" END)) - julianday((CASE WHEN "admitted" < '2015-01-01'`},
	} {
		p, err := analyze(t, "SELECT AVG(discharged - admitted) FROM visits WHERE discharged - admitted > 1", tc.dialect)
		if err != nil {
			t.Fatal(err)
		}
		// 2015-01-01 .. 2025-03-31 minus 2015-01-01 .. 2024-12-31, in days.
		if a := p.Aggs[0]; a.Lower != -3652 || a.Upper != 3742 {
			t.Errorf("%v: bounds [%v, %v], want [-3652, 3742]", tc.dialect, a.Lower, a.Upper)
		}
		if strings.Count(p.SQL, tc.diff) < 2 {
			t.Errorf("%v: SQL lacks the day difference %s in WHERE and the aggregate:\n%s", tc.dialect, tc.diff, p.SQL)
		}
	}
}

func TestGroupByDateParts(t *testing.T) {
	p, err := analyze(t, "SELECT YEAR(admitted) AS y, MONTH(admitted), COUNT(*) FROM visits GROUP BY y, MONTH(admitted)", parser.PostgreSQL)
	if err != nil {
		t.Fatal(err)
	}
	if p.PartitionSelection {
		t.Error("years within the bounds and the twelve months are public: no partition selection")
	}
	if y := p.Keys[0].Public; len(y) != 10 || y[0] != int64(2015) || y[9] != int64(2024) {
		t.Errorf("years %v, want 2015..2024", y)
	}
	if m := p.Keys[1].Public; len(m) != 12 {
		t.Errorf("months %v, want 1..12", m)
	}
	// PostgreSQL's year of an infinite date cannot be cast (total.go).
	if !strings.Contains(p.SQL, `CAST(EXTRACT(YEAR FROM (CASE WHEN isfinite("admitted") THEN "admitted" END)) AS INTEGER)`) {
		t.Errorf("SQL:\n%s", p.SQL)
	}
	// The PostgreSQL forms mean the same.
	q, err := analyze(t, "SELECT EXTRACT(MONTH FROM admitted), COUNT(*) FROM visits GROUP BY 1", parser.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Keys[0].Public) != 12 || !strings.Contains(q.SQL, `CAST(strftime('%m', "admitted") AS INTEGER)`) {
		t.Errorf("EXTRACT(MONTH FROM d): public %v, SQL:\n%s", q.Keys[0].Public, q.SQL)
	}
}

func TestDatesAreNotNumbers(t *testing.T) {
	for _, sql := range []string{
		"SELECT SUM(admitted) FROM visits",
		"SELECT AVG(admitted + 1) FROM visits",
		"SELECT AVG(cost - admitted) FROM visits",
	} {
		_, err := analyze(t, sql, parser.MySQL)
		if err == nil || !strings.Contains(err.Error(), "a date: use the difference of two date columns") {
			t.Errorf("%s: got %v, want advice on dates", sql, err)
		}
	}
}
