package catalog

import (
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/parser"
)

// overrides is a session that SET some variables and has dpproxy settings.
func overrides(vals map[string]any) SessionInfo {
	s := alice
	s.Vars = func(name string) (any, bool) { v, ok := vals[name]; return v, ok }
	return s
}

func TestVariableDefaults(t *testing.T) {
	c := demo()
	for _, tc := range []struct {
		name string
		want any
	}{
		{"version", "10.11.6-MariaDB"},
		{"VERSION_COMMENT", "dpproxy — differentially private SQL proxy"},
		{"max_allowed_packet", int64(16777216)},
		{"character_set_client", "utf8mb4"},
		{"collation_connection", "utf8mb4_general_ci"},
		{"autocommit", int64(1)},
		{"tx_read_only", int64(0)},
		{"transaction_isolation", "REPEATABLE-READ"},
		{"tx_isolation", "REPEATABLE-READ"},
		{"lower_case_table_names", int64(0)},
		{"time_zone", "SYSTEM"},
		{"system_time_zone", "UTC"},
		{"query_cache_type", "OFF"},
		{"performance_schema", int64(0)},
		{"init_connect", ""},
		{"license", "GPL"},
		{"sql_select_limit", "18446744073709551615"},
		{"dp_epsilon", nil}, // the session supplies dpproxy's settings
	} {
		got, ok := c.Variable(tc.name, alice)
		if !ok || got != tc.want {
			t.Errorf("Variable(%q) = %v (%T), %v; want %v", tc.name, got, got, ok, tc.want)
		}
	}
	if _, ok := c.Variable("no_such_variable", alice); ok {
		t.Error("Variable(no_such_variable) found")
	}
	sess := alice
	sess.Warnings = []string{"a", "b"}
	if got, _ := c.Variable("warning_count", sess); got != int64(2) {
		t.Errorf("warning_count = %v, want 2", got)
	}
}

func TestVariableSessionOverrides(t *testing.T) {
	c := demo()
	sess := overrides(map[string]any{"dp_epsilon": 0.5, "dp_mechanism": "gaussian", "wait_timeout": int64(60), "autocommit": int64(0)})
	for name, want := range map[string]any{"dp_epsilon": 0.5, "DP_MECHANISM": "gaussian", "wait_timeout": int64(60),
		"autocommit": int64(0), "interactive_timeout": int64(28800)} {
		if got, ok := c.Variable(name, sess); !ok || got != want {
			t.Errorf("Variable(%q) = %v, %v; want %v", name, got, ok, want)
		}
	}
	vars := c.Variables(sess)
	if !slices.IsSortedFunc(vars, func(a, b [2]any) int { return cmpString(a[0], b[0]) }) {
		t.Error("Variables are not sorted by name")
	}
	got := map[any]any{}
	for _, v := range vars {
		got[v[0]] = v[1]
	}
	for name, want := range map[string]string{"dp_epsilon": "0.5", "dp_mechanism": "gaussian", "dp_delta": "",
		"autocommit": "OFF", "wait_timeout": "60", "sql_auto_is_null": "OFF", "have_ssl": "DISABLED",
		"max_allowed_packet": "16777216", "version": "10.11.6-MariaDB"} {
		if got[name] != want {
			t.Errorf("SHOW VARIABLES %s = %q, want %q", name, got[name], want)
		}
	}
}

func cmpString(a, b any) int {
	switch as, bs := a.(string), b.(string); {
	case as < bs:
		return -1
	case as > bs:
		return 1
	}
	return 0
}

func TestShowVariablesFilters(t *testing.T) {
	c := demo()
	sess := overrides(map[string]any{"wait_timeout": int64(60), "dp_epsilon": 1.0})
	_, rows := show(t, c, &parser.Show{Kind: parser.ShowVariables, Like: "CHARACTER\\_SET\\_%"}, sess)
	want := map[any]any{"character_set_client": "utf8mb4", "character_set_connection": "utf8mb4",
		"character_set_database": "utf8mb4", "character_set_filesystem": "binary",
		"character_set_results": "utf8mb4", "character_set_server": "utf8mb4", "character_set_system": "utf8mb3"}
	if len(rows) != len(want) {
		t.Errorf("SHOW VARIABLES LIKE 'character_set_%%' = %v", rows)
	}
	for _, r := range rows {
		if want[r[0]] != r[1] {
			t.Errorf("%v = %v, want %v", r[0], r[1], want[r[0]])
		}
	}
	where := &parser.In{X: &parser.ColumnRef{Name: "variable_name"}, List: []parser.Expr{
		&parser.Literal{Value: "wait_timeout"}, &parser.Literal{Value: "lower_case_table_names"}}}
	_, rows = show(t, c, &parser.Show{Kind: parser.ShowVariables, Where: where}, sess)
	if len(rows) != 2 || !slices.Equal(rows[0], []any{"lower_case_table_names", "0"}) ||
		!slices.Equal(rows[1], []any{"wait_timeout", "60"}) {
		t.Errorf("SHOW VARIABLES WHERE Variable_name IN (...) = %v", rows)
	}
	// GLOBAL ignores what the session SET, but dpproxy's settings still come
	// from the session.
	_, rows = show(t, c, &parser.Show{Kind: parser.ShowVariables, Global: true, Where: where}, sess)
	if len(rows) != 2 || rows[1][1] != "28800" {
		t.Errorf("SHOW GLOBAL VARIABLES wait_timeout = %v", rows)
	}
	_, rows = show(t, c, &parser.Show{Kind: parser.ShowVariables, Global: true, Like: "dp_epsilon"}, sess)
	if len(rows) != 1 || rows[0][1] != "1" {
		t.Errorf("SHOW GLOBAL VARIABLES LIKE 'dp_epsilon' = %v", rows)
	}
	// A WHERE may compare with a system variable.
	byVar := &parser.Binary{Op: parser.OpEQ, L: &parser.ColumnRef{Name: "Value"},
		R: &parser.Variable{Name: "collation_server", System: true}}
	_, rows = show(t, c, &parser.Show{Kind: parser.ShowVariables, Where: byVar}, sess)
	if len(rows) != 3 { // collation_connection, collation_database, collation_server
		t.Errorf("SHOW VARIABLES WHERE Value = @@collation_server = %v", rows)
	}
	_, rows = show(t, c, &parser.Show{Kind: parser.ShowVariable, Name: "autocommit"}, sess)
	if len(rows) != 1 || rows[0][0] != "ON" {
		t.Errorf("SHOW autocommit = %v", rows)
	}
}
