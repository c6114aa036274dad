package parser

import (
	"testing"
	"unicode/utf8"
)

// FuzzParsePG checks that no input panics the PostgreSQL front end (the C
// parser, the protobuf tree, the conversion and the item-text lexer), that
// every failure is one of the package's two error types, and that a syntax
// error's position lies inside the statement. The seed corpus is in
// testdata/fuzz/FuzzParsePG; run with
//
//	go test ./parser -run '^$' -fuzz FuzzParsePG -fuzztime 1m
func FuzzParsePG(f *testing.F) {
	for _, sql := range []string{
		"SELECT COUNT(*), AVG(x) FROM t WHERE a = $1 GROUP BY b HAVING SUM(y) > 1 ORDER BY 1 NULLS LAST LIMIT 5",
		"SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x), a::int FROM t WHERE b ILIKE 'x%'",
		"SET TIME ZONE 'UTC'",
		"SHOW TRANSACTION ISOLATION LEVEL",
	} {
		f.Add(sql)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		stmt, n, err := Parse(sql, PostgreSQL)
		switch e := err.(type) {
		case nil:
			if stmt == nil {
				t.Fatalf("Parse(%q) returned neither a statement nor an error", sql)
			}
			if n < 0 {
				t.Fatalf("Parse(%q) counted %d parameters", sql, n)
			}
		case *SyntaxError:
			if stmt != nil {
				t.Fatalf("Parse(%q) returned a statement with error %v", sql, err)
			}
			if e.Position < 0 || e.Position > utf8.RuneCountInString(sql)+1 {
				t.Fatalf("Parse(%q) syntax error at %d, outside the statement", sql, e.Position)
			}
		case *UnsupportedError:
			if stmt != nil {
				t.Fatalf("Parse(%q) returned a statement with error %v", sql, err)
			}
		default:
			t.Fatalf("Parse(%q) error %v has type %T, want *SyntaxError or *UnsupportedError", sql, err, err)
		}
		_ = Fingerprint(sql, PostgreSQL)
		// The nesting bound covers what the parsers build.
		checkBoundCovers(t, sql, PostgreSQL)
	})
}
