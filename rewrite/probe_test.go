package rewrite

import (
	"testing"

	"github.com/dpproxy/dpproxy/parser"
)

func TestProvablyEmpty(t *testing.T) {
	tests := []struct {
		sql    string
		d      parser.Dialect
		params []any
		want   bool
	}{
		{"SELECT * FROM adult LIMIT 0", parser.MySQL, nil, true},
		{"SELECT * FROM adult LIMIT 0 OFFSET 10", parser.MySQL, nil, true},
		{"SELECT * FROM adult LIMIT 10, 0", parser.MySQL, nil, true},
		{"SELECT * FROM adult LIMIT ?", parser.MySQL, []any{int64(0)}, true},
		{"SELECT * FROM adult LIMIT ?", parser.MySQL, []any{int64(1)}, false},
		{"SELECT * FROM adult LIMIT ?", parser.MySQL, []any{"0"}, true},
		{"SELECT * FROM adult LIMIT ?", parser.MySQL, []any{"0.5"}, false},
		{"SELECT * FROM adult LIMIT ?", parser.MySQL, []any{float64(0)}, false},
		{"SELECT * FROM adult LIMIT 1", parser.MySQL, nil, false},
		{"SELECT COUNT(*) FROM adult LIMIT 0", parser.MySQL, nil, true},
		{"SELECT age, sex FROM adult WHERE 1=0", parser.MySQL, nil, true},
		{"SELECT age FROM adult WHERE FALSE", parser.MySQL, nil, true},
		{"SELECT age FROM adult WHERE 0", parser.MySQL, nil, true},
		{"SELECT age FROM adult WHERE 1<>1", parser.MySQL, nil, true},
		{"SELECT age FROM adult WHERE NULL", parser.MySQL, nil, true},
		{"SELECT age FROM adult WHERE age > 3 AND 1 = 0", parser.MySQL, nil, true},
		{"SELECT age FROM adult WHERE NOT (1 = 1) AND age > 3", parser.MySQL, nil, true},
		{"SELECT sex, COUNT(*) FROM adult WHERE 1=0 GROUP BY sex", parser.MySQL, nil, true},
		{`SELECT "age" FROM adult WHERE 1=0`, parser.PostgreSQL, nil, true},
		{`SELECT * FROM adult WHERE false LIMIT 5`, parser.PostgreSQL, nil, true},
		{`SELECT * FROM adult LIMIT $1`, parser.PostgreSQL, []any{int64(0)}, true},
		// Not provable from the text: true predicates, data, functions,
		// parameters, OR with a column, an aggregate without GROUP BY
		// (one row whatever the data).
		{"SELECT age FROM adult WHERE 1=1", parser.MySQL, nil, false},
		{"SELECT age FROM adult WHERE age = 1000", parser.MySQL, nil, false},
		{"SELECT age FROM adult WHERE 1=0 OR age > 3", parser.MySQL, nil, false},
		{"SELECT age FROM adult WHERE ABS(1) = 0", parser.MySQL, nil, false},
		{"SELECT age FROM adult WHERE ? = 1", parser.MySQL, []any{int64(0)}, false},
		{"SELECT age FROM adult WHERE @x = 1", parser.MySQL, nil, false},
		{"SELECT COUNT(*) FROM adult WHERE 1=0", parser.MySQL, nil, false},
		{"SELECT sex FROM adult WHERE 1=0 HAVING COUNT(*) > 0", parser.MySQL, nil, false},
		{"SELECT age FROM adult", parser.MySQL, nil, false},
	}
	for _, tc := range tests {
		st, _, err := parser.Parse(tc.sql, tc.d)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		if got := ProvablyEmpty(st.(*parser.Select), tc.params); got != tc.want {
			t.Errorf("%s %v: ProvablyEmpty = %v, want %v", tc.sql, tc.params, got, tc.want)
		}
	}
}
