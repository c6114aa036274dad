package rewrite

import (
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
)

// TestResultColumnNames: DP answers and forwarded public reads name their
// columns as the client's own server would (MariaDB: `sex` for `adult`.`sex`;
// PostgreSQL: "level" for "education_levels"."level", "count" for COUNT(*)).
func TestResultColumnNames(t *testing.T) {
	p, err := analyze(t, "SELECT `adult`.`sex`, `sex`, COUNT(*), AVG(`age`) AS a FROM adult GROUP BY `sex`", parser.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range p.Items {
		names = append(names, it.Name)
	}
	if got, want := strings.Join(names, "|"), "sex|sex|COUNT(*)|a"; got != want {
		t.Errorf("MySQL DP names %s, want %s", got, want)
	}
	pol, err := policy.Parse([]byte(testPolicy))
	if err != nil {
		t.Fatal(err)
	}
	st, _, err := parser.Parse(`SELECT "adult"."sex", count(*), avg(age) FROM adult GROUP BY sex`, parser.PostgreSQL)
	if err != nil {
		t.Fatal(err)
	}
	p, err = Analyze(Input{Select: st.(*parser.Select), Policy: pol, Schema: testSchema, Database: "demo", Dialect: parser.PostgreSQL})
	if err != nil {
		t.Fatal(err)
	}
	names = nil
	for _, it := range p.Items {
		names = append(names, it.Name)
	}
	if got, want := strings.Join(names, "|"), "sex|count|avg"; got != want {
		t.Errorf("PostgreSQL DP names %s, want %s", got, want)
	}

	public := []struct {
		sql      string
		front    parser.Dialect
		backend  parser.Dialect
		contains string
	}{
		{"SELECT `towns`.`name`, `name` FROM towns", parser.MySQL, parser.MySQL, "SELECT `towns`.`name` AS `name`, `name` AS `name` FROM"},
		{"SELECT COUNT(*) FROM towns", parser.MySQL, parser.PostgreSQL, `COUNT(*) AS "COUNT(*)"`},
		{`SELECT "towns"."name", count(*), 1+1 FROM towns GROUP BY 1`, parser.PostgreSQL, parser.PostgreSQL, `"towns"."name" AS "name", COUNT(*) AS "count", (1 + 1) AS "?column?"`},
		{`SELECT "towns"."name" FROM towns`, parser.PostgreSQL, parser.MySQL, "`towns`.`name` AS `name`"},
	}
	for _, tc := range public {
		st, _, err := parser.Parse(tc.sql, tc.front)
		if err != nil {
			t.Fatal(err)
		}
		q, err := Public(st.(*parser.Select), tc.backend, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		if !strings.Contains(q, tc.contains) {
			t.Errorf("%s: rendered %s, want it to contain %s", tc.sql, q, tc.contains)
		}
	}
}
