package backend

import (
	"net/url"
	"strings"
	"testing"
)

func TestSQLiteDSN(t *testing.T) {
	tests := []struct {
		dsn, want string
		private   bool
	}{
		{"/data/x.db", "/data/x.db?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)", false},
		{"x.db?", "x.db?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)", false},
		{"file:x.db?_fk=1", "file:x.db?_fk=1&_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)", false},
		{"x.db?_pragma=Journal_Mode(DELETE)&_busy_timeout=1", "x.db?_pragma=Journal_Mode(DELETE)&_busy_timeout=1", false},
		{":memory:", ":memory:?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)", true},
		{"file::memory:?cache=shared", "file::memory:?cache=shared&_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)", false},
		{"file:mem1?mode=memory", "file:mem1?mode=memory&_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)", true},
	}
	for _, tt := range tests {
		got, _, private, err := sqliteDSN(tt.dsn)
		if err != nil || got != tt.want || private != tt.private {
			t.Errorf("sqliteDSN(%q) = %q, private %v, %v; want %q, private %v", tt.dsn, got, private, err, tt.want, tt.private)
		}
	}
	if _, _, _, err := sqliteDSN("x.db?a=%zz"); err == nil {
		t.Error("sqliteDSN accepted a malformed query")
	}
}

// FuzzSQLiteDSN checks that sqliteDSN only ever appends: the caller's path and
// parameters survive unchanged, busy_timeout and journal_mode end up set, and
// neither is added when the caller set it already.
func FuzzSQLiteDSN(f *testing.F) {
	for _, s := range []string{"x.db", ":memory:", "file:x.db?_fk=1", "x.db?_timeout=1&_pragma=journal_mode(off)", "a?b=c&&d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		got, path, _, err := sqliteDSN(dsn)
		if err != nil {
			return
		}
		if !strings.HasPrefix(got, strings.TrimSuffix(dsn, "?")) {
			t.Fatalf("sqliteDSN(%q) = %q, which does not start with the input", dsn, got)
		}
		gotPath, rawQuery, _ := strings.Cut(got, "?")
		if gotPath != path {
			t.Fatalf("sqliteDSN(%q) changed the path to %q", dsn, gotPath)
		}
		_, callerQuery, _ := strings.Cut(dsn, "?")
		caller, _ := url.ParseQuery(callerQuery) // sqliteDSN parsed it already
		added := strings.TrimPrefix(got, strings.TrimSuffix(dsn, "?"))
		query, err := url.ParseQuery(rawQuery)
		if err != nil {
			t.Fatalf("sqliteDSN(%q) = %q, whose query does not parse: %v", dsn, got, err)
		}
		for _, p := range []struct {
			pragma string
			keys   []string
		}{
			{"busy_timeout", []string{"_busy_timeout", "_timeout"}},
			{"journal_mode", []string{"_journal_mode", "_journal"}},
		} {
			if !setsPragma(query, p.pragma, p.keys...) {
				t.Fatalf("sqliteDSN(%q) = %q does not set %s", dsn, got, p.pragma)
			}
			if setsPragma(caller, p.pragma, p.keys...) && strings.Contains(added, p.pragma) {
				t.Fatalf("sqliteDSN(%q) = %q sets %s a second time", dsn, got, p.pragma)
			}
		}
	})
}
