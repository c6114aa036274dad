package parser

import (
	"testing"
)

// FuzzParse checks that no input panics the parser or its conversion, and
// that every failure is one of the package's two error types. The seed
// corpus is in testdata/fuzz/FuzzParse; run with
//
//	go test ./parser -run '^$' -fuzz FuzzParse -fuzztime 1m
func FuzzParse(f *testing.F) {
	for _, sql := range []string{
		"SELECT COUNT(*), AVG(x) FROM t WHERE a = ? GROUP BY b HAVING SUM(y) > 1 ORDER BY 1 LIMIT 5",
		"SHOW PRIVACY BUDGET FOR USER alice",
		"SET NAMES utf8mb4",
	} {
		f.Add(sql)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		stmt, n, err := Parse(sql, MySQL)
		switch err.(type) {
		case nil:
			if stmt == nil {
				t.Fatalf("Parse(%q) returned neither a statement nor an error", sql)
			}
			if n < 0 {
				t.Fatalf("Parse(%q) counted %d placeholders", sql, n)
			}
		case *SyntaxError, *UnsupportedError:
			if stmt != nil {
				t.Fatalf("Parse(%q) returned a statement with error %v", sql, err)
			}
		default:
			t.Fatalf("Parse(%q) error %v has type %T, want *SyntaxError or *UnsupportedError", sql, err, err)
		}
		_ = Fingerprint(sql, MySQL)
		// The nesting bound covers what the parsers build.
		checkBoundCovers(t, sql, MySQL)
	})
}
