package parser

import "testing"

// mustParsePG parses sql as PostgreSQL and fails the test on an error.
func mustParsePG(t *testing.T, sql string) (Statement, int) {
	t.Helper()
	stmt, n, err := Parse(sql, PostgreSQL)
	if err != nil {
		t.Fatalf("Parse(%q, PostgreSQL): %v", sql, err)
	}
	return stmt, n
}

// pgItem is a select item as the PostgreSQL front end gives it: its text
// and the column name PostgreSQL would give it.
func pgItem(e Expr, text, name string) SelectItem {
	return SelectItem{Expr: e, Text: text, DefaultName: name}
}

// pgSel1 is "SELECT <e>" without FROM.
func pgSel1(e Expr, text, name string) *Select {
	return &Select{Items: []SelectItem{pgItem(e, text, name)}}
}

// checkUnsupportedPG asserts that sql is refused as *UnsupportedError{What: what}.
func checkUnsupportedPG(t *testing.T, sql, what string) {
	t.Helper()
	stmt, _, err := Parse(sql, PostgreSQL)
	unsupported, ok := err.(*UnsupportedError)
	if !ok {
		t.Errorf("Parse(%q, PostgreSQL) = %s, %v; want *UnsupportedError", sql, dump(stmt), err)
		return
	}
	if unsupported.What != what {
		t.Errorf("Parse(%q, PostgreSQL) refused %q, want %q", sql, unsupported.What, what)
	}
}
