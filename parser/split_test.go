package parser

import (
	"errors"
	"reflect"
	"testing"
)

func TestSplitPG(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{"SELECT 1", []string{"SELECT 1"}},
		{"SELECT 1;", []string{"SELECT 1;"}}, // one statement: the text as it came
		{"", nil},
		{" ;\n; ", nil},
		{"-- only a comment", nil},
		{"/* a /* nested */ comment */ ;", nil},
		{"SET DateStyle = 'ISO';SET extra_float_digits = 2;show transaction_isolation",
			[]string{"SET DateStyle = 'ISO'", "SET extra_float_digits = 2", "show transaction_isolation"}},
		{"SET client_min_messages TO warning;SET TIME ZONE INTERVAL '+00:00' HOUR TO MINUTE;",
			[]string{"SET client_min_messages TO warning", "SET TIME ZONE INTERVAL '+00:00' HOUR TO MINUTE"}},
		{"SELECT 1;;  ;SELECT 2", []string{"SELECT 1", "SELECT 2"}},
		{"SELECT 1; -- c\n; SELECT 2; /* end */", []string{"SELECT 1", "SELECT 2"}},
		{"SELECT 'a;b'; SELECT $$c;d$$; SELECT $x$e;$$;f$x$", []string{"SELECT 'a;b'", "SELECT $$c;d$$", "SELECT $x$e;$$;f$x$"}},
		{`SELECT "a;b" FROM t; SELECT E'\';'`, []string{`SELECT "a;b" FROM t`, `SELECT E'\';'`}},
		{"SELECT 'a;b'", []string{"SELECT 'a;b'"}},
		// dpproxy's own statements are not PostgreSQL's: cut by pgLexer.
		{"SHOW PRIVACY BUDGET; SELECT 'x;y'; show privacy budget;",
			[]string{"SHOW PRIVACY BUDGET", "SELECT 'x;y'", "show privacy budget"}},
		// Text that does not parse is left whole: Parse reports the error
		// at its place in the whole text, and nothing runs.
		{"SELECT 1; SELEC 2; SELECT 3", []string{"SELECT 1; SELEC 2; SELECT 3"}},
	} {
		got, err := SplitPG(tc.sql)
		if err != nil {
			t.Errorf("SplitPG(%q): %v", tc.sql, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SplitPG(%q) = %q, want %q", tc.sql, got, tc.want)
		}
	}
}

// A syntax error next to a dpproxy statement stops the whole text before
// anything runs, at its position in the whole text.
func TestSplitPGSyntaxErrorWithDPStatement(t *testing.T) {
	_, err := SplitPG("SHOW PRIVACY BUDGET; SELECT 'é' FORM t")
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want a syntax error", err)
	}
	if se.Position != 38 {
		t.Errorf("position %d, want 38 (%s)", se.Position, se.Msg)
	}
	// The whole text, with a syntax error, parses as one error.
	if _, _, err := Parse("SELECT 1; SELEC 2", PostgreSQL); !errors.As(err, &se) {
		t.Errorf("got %v, want a syntax error", err)
	}
}

func TestPGSetTimeZoneInterval(t *testing.T) {
	for sql, want := range map[string]string{
		"SET TIME ZONE INTERVAL '+00:00' HOUR TO MINUTE": "<+00>-00",
		"SET TIME ZONE INTERVAL '-08:00' HOUR TO MINUTE": "<-08>+08",
		"SET TIME ZONE INTERVAL '+05:30' HOUR TO MINUTE": "<+05:30>-05:30",
		"SET TIME ZONE 'UTC'":                            "UTC",
	} {
		stmt, _, err := Parse(sql, PostgreSQL)
		if err != nil {
			t.Errorf("%s: %v", sql, err)
			continue
		}
		set, ok := stmt.(*Set)
		if !ok || len(set.Assignments) != 1 || set.Assignments[0].Name != "timezone" {
			t.Errorf("%s: %#v", sql, stmt)
			continue
		}
		if l, ok := set.Assignments[0].Value.(*Literal); !ok || l.Value != want {
			t.Errorf("%s: value %#v, want %q", sql, set.Assignments[0].Value, want)
		}
	}
}
