package rewrite

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
)

const testPolicy = `
backend: {driver: sqlite, dsn: t.db}
roles: {analyst: {budget: {epsilon: 10, delta: 1.0e-5}}}
users: {alice: {password: x, role: analyst}}
tables:
  pums:
    privacy_unit: pid
    unit_name: person
    max_rows_per_unit: 2
    max_groups_per_unit: 3
    columns:
      age: {type: int, lower: 0, upper: 100}
      income: {type: float, lower: 0, upper: 500000}
      sex: {type: int, public_values: [0, 1]}
      id: {type: int, unique: true}
  adult:
    privacy_unit: row
    columns:
      age: {type: int, lower: 17.5, upper: 90}
      sex: {type: string, public_values: ["Female", "Male"]}
  persons:
    privacy_unit: person_id
    unit_name: person
    max_rows_per_unit: 1
    columns:
      height: {type: float, lower: 100, upper: 220}
      region: {type: string, public_values: [north, south]}
  accounts:
    privacy_unit: pid
    max_rows_per_unit: 3
  visits:
    privacy_unit: pid
    max_rows_per_unit: 3
    columns:
      admitted: {type: date, lower: 2015-01-01, upper: 2024-12-31}
      discharged: {type: date, lower: 2015-01-01, upper: 2025-03-31}
      cost: {type: float, lower: 0, upper: 10000}
  towns:
    public: true
`

type schema map[string][]string

func (s schema) Columns(t string) ([]string, bool) { c, ok := s[t]; return c, ok }

var testSchema = schema{
	"pums":     {"age", "income", "sex", "educ", "pid", "id", "notes"},
	"adult":    {"age", "sex", "workclass"},
	"towns":    {"name"},
	"persons":  {"person_id", "height", "region"},
	"accounts": {"pid", "balance"},
	"visits":   {"pid", "admitted", "discharged", "cost"},
}

func analyze(t *testing.T, sql string, d parser.Dialect) (*Plan, error) {
	t.Helper()
	pol, err := policy.Parse([]byte(testPolicy))
	if err != nil {
		t.Fatal(err)
	}
	stmt, _, err := parser.Parse(sql, parser.MySQL)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return Analyze(Input{Select: stmt.(*parser.Select), Policy: pol, Schema: testSchema, Database: "demo", Dialect: d, Params: []any{int64(30)}})
}

func TestAnalyzeRefusesRowLevelReads(t *testing.T) {
	cases := map[string]string{
		"SELECT * FROM pums":                                  "SELECT *",
		"SELECT age FROM pums":                                "neither aggregated nor a GROUP BY key",
		"SELECT sex, age, COUNT(*) FROM pums GROUP BY sex":    "column age",
		"SELECT COUNT(*) FROM pums GROUP BY pid":              "privacy unit",
		"SELECT COUNT(*) FROM pums GROUP BY id":               "unique column",
		"SELECT SUM(educ) FROM pums":                          "needs a public bound for educ",
		"SELECT AVG(income / (age - 50.5)) FROM pums":         "the divisor can be 0",
		"SELECT COUNT(*) FROM pums GROUP BY pid * 2":          "privacy unit",
		"SELECT MAX(workclass) FROM adult":                    "needs a public bound",
		"SELECT DISTINCT sex FROM pums":                       "DISTINCT",
		"SELECT COUNT(*) FROM pums WHERE age IN (SELECT 1)":   "subqueries",
		"SELECT COUNT(*) FROM pums WHERE @x = 1":              "variables",
		"SELECT COUNT(*) FROM pums HAVING age > 3":            "column age in HAVING",
		"SELECT COUNT(*) FROM pums ORDER BY income":           "column income in ORDER BY",
		"SELECT sex FROM pums GROUP BY sex":                   "must aggregate",
		"SELECT COUNT(*) FROM pums WHERE BENCHMARK(1, 1) = 0": "BENCHMARK",
		"SELECT COUNT(*) FROM towns":                          "not a private table",
	}
	for sql, want := range cases {
		_, err := analyze(t, sql, parser.MySQL)
		var ref *RefusedError
		if !errors.As(err, &ref) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want a refusal mentioning %q", sql, err, want)
		}
	}
}

func TestAnalyzeUnsupportedAndUnknown(t *testing.T) {
	cases := map[string]string{
		"SELECT COUNT(*) FROM pums p JOIN adult a ON p.age = a.age": "cannot be joined with another private table",
		"SELECT SUM(DISTINCT age) FROM pums":                        "SUM(DISTINCT",
		"SELECT COUNT(nope) FROM pums":                              "unknown column 'nope'",
		"SELECT COUNT(*) FROM pums x WHERE y.age > 1":               "unknown column 'y.age'",
	}
	for sql, want := range cases {
		_, err := analyze(t, sql, parser.MySQL)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error mentioning %q", sql, err, want)
		}
	}
}

func TestPlanQuantitiesAndSensitivity(t *testing.T) {
	p, err := analyze(t, "SELECT sex, COUNT(*) AS n, SUM(income), AVG(age), SUM(income)/COUNT(*) FROM pums WHERE age > ? GROUP BY sex", parser.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	// COUNT(*) is computed once though it appears twice; so is SUM(income).
	if len(p.Aggs) != 3 {
		t.Fatalf("got %d aggregates, want 3 (count, sum, avg)", len(p.Aggs))
	}
	c := p.Contribution
	if c.MaxRows != 2 || c.MaxGroups != 3 {
		t.Errorf("contribution %+v, want 2 rows and 3 groups per unit", c)
	}
	count, sum, avg := p.Aggs[0], p.Aggs[1], p.Aggs[2]
	if s := count.Quantities[0].Sensitivity; s.L1 != 6 {
		t.Errorf("COUNT L1 = %v, want 2·3", s.L1)
	}
	if s := sum.Quantities[0].Sensitivity; s.L1 != 3e6 {
		t.Errorf("SUM(income) L1 = %v, want 500000·2·3", s.L1)
	}
	if len(avg.Quantities) != 2 || avg.Quantities[0].Kind != QCenteredSum || avg.Quantities[0].Sensitivity.L1 != 300 {
		t.Errorf("AVG(age) quantities %+v, want a centred sum with L1 50·2·3", avg.Quantities)
	}
	if p.PartitionSelection {
		t.Error("sex has public values: no partition selection needed")
	}
	if !p.Fractional {
		t.Error("scaled partials are fractional: counts must be noised before rounding")
	}
	for _, want := range []string{"ROW_NUMBER() OVER (PARTITION BY `pid` ORDER BY RAND())", "CASE WHEN COUNT(*) > 2 THEN 2.0 / COUNT(*) ELSE 1 END", "dp_group_rank <= 3", "`sex` IN (0, 1)", "(`age` > 30)"} {
		if !strings.Contains(p.SQL, want) {
			t.Errorf("SQL lacks %q:\n%s", want, p.SQL)
		}
	}
}

func TestRowUnitPlanIsOneLevel(t *testing.T) {
	p, err := analyze(t, "SELECT workclass, AVG(age) FROM adult GROUP BY workclass", parser.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(p.SQL, "ROW_NUMBER") {
		t.Errorf("a row-unit table needs no contribution bounding:\n%s", p.SQL)
	}
	if !p.PartitionSelection {
		t.Error("workclass has no public values: partition selection is needed")
	}
	if p.Fractional {
		t.Error("a row-unit table's counts are whole numbers")
	}
	// Integer column bounds are tightened to the integers inside them.
	if a := p.Aggs[0]; a.Lower != 18 || a.Upper != 90 {
		t.Errorf("bounds [%v, %v], want [18, 90]", a.Lower, a.Upper)
	}
	if !strings.Contains(p.SQL, `"age" < 18`) || !strings.Contains(p.SQL, `- 54)`) {
		t.Errorf("clamping or centring missing:\n%s", p.SQL)
	}
}

func TestExpressionsInsideAggregates(t *testing.T) {
	cases := []struct {
		sql          string
		lower, upper float64
		intValued    bool
	}{
		{"SELECT SUM(age * 2) FROM pums", 0, 200, true},
		{"SELECT AVG(income / 1000) FROM pums", 0, 500, false},
		{"SELECT SUM(CASE WHEN age > 60 THEN 1 ELSE 0 END) FROM pums", 0, 1, true},
		{"SELECT SUM(age > 60) FROM pums", 0, 1, true},
		{"SELECT AVG(income - age) FROM pums", -100, 500000, false},
		{"SELECT SUM(ABS(age - 50)) FROM pums", 0, 50, true},
		{"SELECT VAR_POP(FLOOR(age / 10)) FROM pums", 0, 10, false},
	}
	for _, tc := range cases {
		p, err := analyze(t, tc.sql, parser.MySQL)
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		a := p.Aggs[0]
		if a.Lower != tc.lower || a.Upper != tc.upper || a.IntValued != tc.intValued {
			t.Errorf("%s: bound [%v, %v] int=%v, want [%v, %v] int=%v", tc.sql, a.Lower, a.Upper, a.IntValued, tc.lower, tc.upper, tc.intValued)
		}
		// The argument is clamped to its derived bound in the backend.
		if !strings.Contains(p.SQL, "THEN "+number(tc.upper)+" ELSE") {
			t.Errorf("%s: the argument is not clamped to %v:\n%s", tc.sql, tc.upper, p.SQL)
		}
	}
}

func TestGroupByExpressionDerivesPublicValues(t *testing.T) {
	p, err := analyze(t, "SELECT FLOOR(age / 10) * 10 AS decade, COUNT(*) FROM pums GROUP BY decade ORDER BY decade", parser.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	k := p.Keys[0]
	if p.PartitionSelection || len(k.Public) != 11 || k.Public[0] != int64(0) || k.Public[10] != int64(100) {
		t.Errorf("decades over age in [0, 100]: public %v, selection %v", k.Public, p.PartitionSelection)
	}
	// The select list refers to the released key, not to age.
	if ref, ok := p.Items[0].Expr.(*parser.ColumnRef); !ok || ref.Name != k.Name {
		t.Errorf("item 0 is %#v, want a reference to %s", p.Items[0].Expr, k.Name)
	}
	p, err = analyze(t, "SELECT CASE WHEN sex = 1 THEN 'm' ELSE 'f' END AS s, AVG(age) FROM pums GROUP BY 1", parser.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Keys[0].Public; len(got) != 2 || got[0] != "f" || got[1] != "m" {
		t.Errorf("CASE over sex: public %v, want [f m]", got)
	}
	p, err = analyze(t, "SELECT LOWER(notes), COUNT(*) FROM pums GROUP BY LOWER(notes)", parser.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	if !p.PartitionSelection {
		t.Error("LOWER(notes) has no public domain: partition selection is needed")
	}
}

func TestDistinctAndVariance(t *testing.T) {
	p, err := analyze(t, "SELECT COUNT(DISTINCT pid), STDDEV(age), VAR_SAMP(age) FROM pums", parser.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	if q := p.Aggs[0].Quantities[0]; q.Kind != QUnits || q.Sensitivity.L1 != 1 {
		t.Errorf("COUNT(DISTINCT pid): %+v, want distinct units with sensitivity 1", q)
	}
	if q := p.Aggs[1].Quantities[0]; q.Kind != QCenteredSquares || q.Sensitivity.L1 != 2*50*50 {
		t.Errorf("STDDEV second moment: %+v, want L1 2·50²", q)
	}
	if !p.Aggs[2].Sample || p.Aggs[1].Sample {
		t.Error("VAR_SAMP is the sample form, STDDEV the population one")
	}
	if !strings.Contains(p.SQL, "1 AS dp_q0") || !strings.Contains(p.SQL, "GROUP BY `pid`") {
		t.Errorf("distinct units are not counted as one per unit:\n%s", p.SQL)
	}
	p, err = analyze(t, "SELECT sex, COUNT(DISTINCT workclass) FROM adult GROUP BY sex", parser.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	if q := p.Aggs[0].Quantities[0]; q.Kind != QDistinct || q.Sensitivity.L1 != 1 {
		t.Errorf("COUNT(DISTINCT workclass) over adult: %+v", q)
	}
}

func TestStringLiteralsAreEscapedPerDialect(t *testing.T) {
	const evil = `O'Brien \' OR 1=1 --`
	for d, want := range map[parser.Dialect]string{
		parser.MySQL:      "_utf8mb4 X'4f27427269656e205c27204f5220313d31202d2d'",
		parser.PostgreSQL: `E'O''Brien \\'' OR 1=1 --'`,
		parser.SQLite:     `'O''Brien \'' OR 1=1 --'`,
	} {
		r := &renderer{dialect: d}
		if got := r.bind(evil); got != want {
			t.Errorf("%v: %s, want %s", d, got, want)
		}
	}
}

// Derived tables that each use their column twice expand to a tree of 2^k
// nodes: the query is refused at once, before anything walks the tree
// (issue 11: 855 bytes at k = 24 took 12 s and 780 MB).
func TestExpandedDerivedTablesAreBounded(t *testing.T) {
	q := "SELECT age AS x FROM pums"
	for i := 0; i < 40; i++ {
		q = fmt.Sprintf("SELECT x + x AS x FROM (%s) t%d", q, i)
	}
	q = "SELECT SUM(x) FROM (" + q + ") t"
	start := time.Now()
	_, err := analyze(t, q, parser.MySQL)
	if err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("40 doubling derived tables: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refusing took %v", d)
	}
	// A few levels are fine.
	q = "SELECT age AS x FROM pums"
	for i := 0; i < 3; i++ {
		q = fmt.Sprintf("SELECT x + x AS x FROM (%s) t%d", q, i)
	}
	if _, err := analyze(t, "SELECT COUNT(*) FROM ("+q+") t WHERE x > 10", parser.MySQL); err != nil {
		t.Errorf("3 doubling derived tables: %v", err)
	}
}
