package rewrite

import (
	"errors"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/parser"
)

func TestJoinOnPrivacyUnit(t *testing.T) {
	p, err := analyze(t, "SELECT q.region, COUNT(*), SUM(p.income), AVG(height) FROM pums p JOIN persons q ON p.pid = q.person_id AND p.age > 20 GROUP BY q.region", parser.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	// pums has at most 2 rows per person and persons 1: 2 join rows; groups
	// bounded by the larger of the two tables' bounds.
	if c := p.Contribution; c.MaxRows != 2 || c.MaxGroups != 3 {
		t.Errorf("contribution %+v, want 2 rows (2·1) and 3 groups", c)
	}
	if p.PartitionSelection || p.Keys[0].Name != "q.region" || len(p.Keys[0].Public) != 2 {
		t.Errorf("key %+v: region's public values should carry over", p.Keys[0])
	}
	if a := p.Aggs[2]; a.Lower != 100 || a.Upper != 220 {
		t.Errorf("AVG(height) bounds [%v, %v], want the persons table's [100, 220]", a.Lower, a.Upper)
	}
	for _, want := range []string{
		"FROM `pums` AS `p` JOIN `persons` AS `q` ON ((`p`.`pid` = `q`.`person_id`) AND (`p`.`age` > 20))",
		"`p`.`pid` AS dp_unit",
		"PARTITION BY `p`.`pid`",
		"`q`.`region` IN (_utf8mb4",
	} {
		if !strings.Contains(p.SQL, want) {
			t.Errorf("SQL lacks %q:\n%s", want, p.SQL)
		}
	}
	// Items refer to the key by its qualified name.
	if ref, ok := p.Items[0].Expr.(*parser.ColumnRef); !ok || ref.Name != "q.region" {
		t.Errorf("item 0 = %#v, want a reference to key q.region", p.Items[0].Expr)
	}
}

func TestSelfJoinAndUsing(t *testing.T) {
	p, err := analyze(t, "SELECT COUNT(DISTINCT pid), COUNT(*) FROM pums a JOIN pums b USING (pid) WHERE a.age < b.age", parser.PostgreSQL)
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Contribution; c.MaxRows != 4 {
		t.Errorf("contribution %+v, want 4 rows (2·2)", c)
	}
	if !strings.Contains(p.SQL, `"pums" AS "a" JOIN "pums" AS "b" USING ("pid")`) || !strings.Contains(p.SQL, `"a"."pid" AS dp_unit`) {
		t.Errorf("SQL:\n%s", p.SQL)
	}
	if p.Aggs[0].Quantities[0].Kind != QUnits {
		t.Errorf("COUNT(DISTINCT pid) over the join counts persons: %+v", p.Aggs[0].Quantities)
	}
}

func TestJoinOfThreeTables(t *testing.T) {
	p, err := analyze(t, "SELECT q.region, COUNT(*) FROM pums p JOIN persons q ON p.pid = q.person_id LEFT JOIN pums r ON r.pid = q.person_id AND r.age > 3 GROUP BY q.region", parser.PostgreSQL)
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Contribution; c.MaxRows != 4 || c.MaxGroups != 3 {
		t.Errorf("contribution %+v, want 2·1·2 rows and 3 groups", c)
	}
	if !strings.Contains(p.SQL, `"pums" AS "p" JOIN "persons" AS "q" ON ("p"."pid" = "q"."person_id") LEFT JOIN "pums" AS "r" ON (("r"."pid" = "q"."person_id") AND ("r"."age" > 3))`) {
		t.Errorf("SQL:\n%s", p.SQL)
	}
	for sql, want := range map[string]string{
		// The third table must join on its unit.
		"SELECT COUNT(*) FROM pums p JOIN persons q ON p.pid = q.person_id JOIN pums r ON r.age = p.age":       "join only on their privacy units",
		"SELECT COUNT(*) FROM pums p JOIN persons q ON p.pid = q.person_id RIGHT JOIN pums r ON r.pid = p.pid": "RIGHT JOIN",
		"SELECT COUNT(*) FROM pums p JOIN persons q ON p.pid = q.person_id JOIN accounts c ON c.pid = p.pid":   "same unit_name",
	} {
		if _, err := analyze(t, sql, parser.MySQL); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error mentioning %q", sql, err, want)
		}
	}
}

func TestOuterJoinCountsMatchedPersons(t *testing.T) {
	// In a LEFT JOIN the right table's unit is NULL for persons without a
	// match: COUNT(DISTINCT q.person_id) counts values, not every person.
	p, err := analyze(t, "SELECT COUNT(DISTINCT q.person_id), COUNT(DISTINCT p.pid) FROM pums p LEFT JOIN persons q ON p.pid = q.person_id", parser.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	if k := p.Aggs[0].Quantities[0].Kind; k != QDistinct {
		t.Errorf("COUNT(DISTINCT q.person_id) quantity %v, want distinct values", k)
	}
	if k := p.Aggs[1].Quantities[0].Kind; k != QUnits {
		t.Errorf("COUNT(DISTINCT p.pid) quantity %v, want persons", k)
	}
}

func TestJoinRefusals(t *testing.T) {
	cases := map[string]string{
		"SELECT COUNT(*) FROM pums p JOIN persons q ON p.age = q.height":                            "join only on their privacy units",
		"SELECT COUNT(*) FROM pums p JOIN persons q ON p.pid = q.person_id OR p.age > 3":            "join only on their privacy units",
		"SELECT COUNT(*) FROM pums p JOIN accounts c ON p.pid = c.pid":                              "same unit_name",
		"SELECT COUNT(*) FROM pums p JOIN adult a ON p.pid = a.age":                                 "cannot be joined",
		"SELECT COUNT(*) FROM pums p CROSS JOIN persons q":                                          "CROSS JOIN",
		"SELECT COUNT(*) FROM pums JOIN pums ON pums.pid = pums.pid":                                "alias",
		"SELECT age, COUNT(*) FROM pums p JOIN pums q ON p.pid = q.pid GROUP BY age":                "in several tables",
		"SELECT q.person_id, COUNT(*) FROM pums p JOIN persons q ON p.pid = q.person_id GROUP BY 1": "privacy unit",
		"SELECT COUNT(*) FROM pums p JOIN persons q USING (pid)":                                    "unknown column 'pid'",
	}
	for sql, want := range cases {
		_, err := analyze(t, sql, parser.MySQL)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error mentioning %q", sql, err, want)
		}
	}
}

func TestPerUnitDerivedTable(t *testing.T) {
	p, err := analyze(t, "SELECT AVG(total), COUNT(*), MAX(n) FROM (SELECT pid, SUM(income) AS total, COUNT(*) AS n FROM pums WHERE age > 17 GROUP BY pid HAVING COUNT(*) > 1) t WHERE total > 1000", parser.PostgreSQL)
	if err != nil {
		t.Fatal(err)
	}
	// One row per person: the outer query is a row-unit query.
	if c := p.Contribution; c.MaxRows != 1 || c.MaxGroups != 1 {
		t.Errorf("contribution %+v, want one row per person", c)
	}
	// SUM over at most 2 rows of income in [0, 500000].
	if a := p.Aggs[0]; a.Lower != 0 || a.Upper != 1e6 {
		t.Errorf("AVG(total) bounds [%v, %v], want [0, 1e6]", a.Lower, a.Upper)
	}
	if a := p.Aggs[2]; a.Kind != AggQuantile || a.Lower != 1 || a.Upper != 2 {
		t.Errorf("MAX(n) = %+v, want a quantile over [1, 2]", a)
	}
	for _, want := range []string{
		`SUM(dp_a0) AS "total", COUNT(*) AS "n"`,
		`WHERE dp_row_rank <= 2 GROUP BY dp_unit`,
		`("age" > 17)`,
		`("n" > 1)`,        // HAVING became a filter on the per-person rows
		`("total" > 1000)`, // the outer WHERE
		`CASE WHEN "income" < 0 THEN 0 WHEN "income" > 500000 THEN 500000`,
	} {
		if !strings.Contains(p.SQL, want) {
			t.Errorf("SQL lacks %q:\n%s", want, p.SQL)
		}
	}
}

// An analyst who knows better than the derived bound tightens it with
// LEAST/GREATEST: interval arithmetic carries it, and the noise shrinks.
func TestPerUnitBoundTightened(t *testing.T) {
	p, err := analyze(t, "SELECT AVG(LEAST(total, 100000)) FROM (SELECT pid, SUM(income) AS total FROM pums GROUP BY pid) t", parser.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	if a := p.Aggs[0]; a.Lower != 0 || a.Upper != 100000 {
		t.Errorf("bounds [%v, %v], want [0, 100000]", a.Lower, a.Upper)
	}
}

func TestPerUnitDerivedTableRefusals(t *testing.T) {
	cases := map[string]string{
		"SELECT AVG(s) FROM (SELECT sex, SUM(income) AS s FROM pums GROUP BY sex) t":                     "privacy unit is lost",
		"SELECT AVG(s) FROM (SELECT pid, age, SUM(income) AS s FROM pums GROUP BY pid, age) t":           "privacy unit is lost",
		"SELECT AVG(s) FROM (SELECT pid, age AS s FROM pums GROUP BY pid) t":                             "must be an aggregate",
		"SELECT AVG(s) FROM (SELECT pid, SUM(educ) AS s FROM pums GROUP BY pid) t":                       "needs a public bound for educ",
		"SELECT AVG(s) FROM (SELECT age, COUNT(*) AS s FROM adult GROUP BY age) t":                       "privacy unit is lost",
		"SELECT pid, COUNT(*) FROM (SELECT pid, COUNT(*) AS n FROM pums GROUP BY pid) t GROUP BY pid":    "unique column",
		"SELECT AVG(s) FROM (SELECT pid, SUM(income) AS s FROM pums GROUP BY pid HAVING MIN(age) > 3) t": "HAVING",
		"SELECT AVG(s) FROM (SELECT pid, VAR_POP(income) AS s FROM pums GROUP BY pid) t":                 "VAR_POP in a derived table",
	}
	for sql, want := range cases {
		_, err := analyze(t, sql, parser.MySQL)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error mentioning %q", sql, err, want)
		}
		var ref *RefusedError
		var uns *parser.UnsupportedError
		var col *UnknownColumnError
		if err != nil && !errors.As(err, &ref) && !errors.As(err, &uns) && !errors.As(err, &col) {
			t.Errorf("%s: error %T, want a refusal or unsupported", sql, err)
		}
	}
}

func TestDistinctCountsAreBoundedByThePublicDomain(t *testing.T) {
	p, err := analyze(t, "SELECT COUNT(DISTINCT sex), COUNT(DISTINCT age), COUNT(DISTINCT income), COUNT(DISTINCT FLOOR(age / 10)) FROM pums", parser.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{2, 101, 0, 11} {
		if got := p.Aggs[i].MaxDistinct; got != want {
			t.Errorf("aggregate %d: MaxDistinct %d, want %d", i, got, want)
		}
	}
}
