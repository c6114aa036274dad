package parser

import (
	"strings"
	"testing"
)

func TestShowPrivacyBudget(t *testing.T) {
	tests := []struct {
		sql  string
		want *ShowPrivacyBudget
	}{
		{"SHOW PRIVACY BUDGET", &ShowPrivacyBudget{}},
		{"show privacy budget;", &ShowPrivacyBudget{}},
		{"SHOW PRIVACY BUDGET FOR USER alice", &ShowPrivacyBudget{User: "alice"}},
		{"SHOW PRIVACY BUDGET FOR USER 'Alice'", &ShowPrivacyBudget{User: "Alice"}},
		{"SHOW PRIVACY BUDGET FOR USER `o'brien`", &ShowPrivacyBudget{User: "o'brien"}},
		{`SHOW PRIVACY BUDGET FOR USER "it\"s"`, &ShowPrivacyBudget{User: `it"s`}},
		{"SHOW PRIVACY BUDGET FOR ROLE analyst", &ShowPrivacyBudget{Role: "analyst"}},
		{"  /* ApplicationName=DBeaver */ SHOW -- why\n PRIVACY # not\n BUDGET FOR ROLE analyst ; ", &ShowPrivacyBudget{Role: "analyst"}},
		{"SHOW PRIVACY BUDGETS", &ShowPrivacyBudget{All: true}},
	}
	for _, d := range []Dialect{MySQL, PostgreSQL} {
		for _, tt := range tests {
			stmt, n, err := Parse(tt.sql, d)
			if err != nil {
				t.Errorf("Parse(%q, %v): %v", tt.sql, d, err)
				continue
			}
			if n != 0 {
				t.Errorf("Parse(%q, %v) counted %d placeholders", tt.sql, d, n)
			}
			checkModel(t, tt.sql, stmt, tt.want)
		}
	}
}

func TestDPStatementSyntaxErrors(t *testing.T) {
	tests := []struct{ sql, msg string }{
		{"SHOW PRIVACY", "expected BUDGET or BUDGETS after SHOW PRIVACY, got end of statement"},
		{"SHOW PRIVACY BUDGES", `expected BUDGET or BUDGETS after SHOW PRIVACY, got "BUDGES"`},
		{"SHOW PRIVACY BUDGET FOR GROUP x", `expected USER or ROLE after FOR, got "GROUP"`},
		{"SHOW PRIVACY BUDGET FOR 'alice'", `expected USER or ROLE after FOR, got 'alice'`},
		{"show privacy budget for user", "expected a user name after show privacy budget for user, got end of statement"},
		{"SHOW PRIVACY BUDGET FOR ROLE ;", `expected a role name after SHOW PRIVACY BUDGET FOR ROLE, got ";"`},
		{"SHOW PRIVACY BUDGET FOR USER ''", "empty user name"},
		{"SHOW PRIVACY BUDGET FOR USER alice bob", `expected end of statement after SHOW PRIVACY BUDGET FOR USER alice, got "bob"`},
		{"SHOW PRIVACY BUDGETS; SHOW PRIVACY BUDGETS", `expected end of statement after SHOW PRIVACY BUDGETS ";", got "SHOW"`},
		{"SHOW PRIVACY BUDGET FOR USER 'alice", "unterminated quoted text"},
		{"SHOW PRIVACY BUDGET /* open", "unterminated comment"},
	}
	for _, tt := range tests {
		_, _, err := Parse(tt.sql, MySQL)
		syntax, ok := err.(*SyntaxError)
		if !ok {
			t.Errorf("Parse(%q) error = %v (%T), want *SyntaxError", tt.sql, err, err)
			continue
		}
		if !strings.Contains(syntax.Msg, tt.msg) {
			t.Errorf("Parse(%q) message %q does not contain %q", tt.sql, syntax.Msg, tt.msg)
		}
	}
}

// Statements that only start like dpproxy's go to the dialect parser.
func TestDPStatementsLeaveOthersAlone(t *testing.T) {
	tests := []struct {
		sql  string
		want Statement
	}{
		{"SHOW PRIVILEGES", nil},
		{"SHOW DATABASES", &Show{Kind: ShowDatabases}},
		{"SHOW `PRIVACY`", nil},
		{"SELECT 'SHOW PRIVACY BUDGET'", sel1(lit("SHOW PRIVACY BUDGET"), "'SHOW PRIVACY BUDGET'")},
	}
	for _, tt := range tests {
		stmt, _, err := Parse(tt.sql, MySQL)
		if tt.want == nil {
			if _, ok := stmt.(*ShowPrivacyBudget); ok || err == nil {
				t.Errorf("Parse(%q) = %s, %v; want a refusal from the MySQL parser", tt.sql, dump(stmt), err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.sql, err)
			continue
		}
		checkModel(t, tt.sql, stmt, tt.want)
	}
}

func TestDPLexer(t *testing.T) {
	lex := dpLexer{src: "Show `a``b` 'it''s' \"q\\n\" 12.5 ; -- end"}
	want := []dpToken{
		{kind: dpIdent, text: "Show", pos: 0},
		{kind: dpQuotedIdent, text: "a`b", pos: 5},
		{kind: dpString, text: "it's", pos: 12},
		{kind: dpString, text: "q\n", pos: 20},
		{kind: dpNumber, text: "12.5", pos: 26},
		{kind: dpPunct, text: ";", pos: 31},
		{kind: dpEOF, pos: 39},
	}
	for i, w := range want {
		got, err := lex.next()
		if err != nil {
			t.Fatalf("token %d: %v", i, err)
		}
		if got != w {
			t.Errorf("token %d = %+v, want %+v", i, got, w)
		}
	}
}
