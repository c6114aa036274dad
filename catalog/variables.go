package catalog

import (
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/eval"
)

// SessionInfo is what the catalog needs to know about the asking session.
type SessionInfo struct {
	User     string
	Database string // the session's default database; "" when none
	// Vars returns the session's value of a system variable (lower-case
	// name) when the session has one: set by SET, or dpproxy's own dp_*
	// settings. nil means no overrides.
	Vars func(name string) (any, bool)
	// Warnings are the previous statement's warnings (SHOW WARNINGS).
	Warnings []string
	// Connections is the number of sessions connected to the proxy
	// (Threads_connected); 0 reports only this one.
	Connections int
}

// varKind says how a system variable is typed in SELECT @@name and printed
// in SHOW VARIABLES.
type varKind int

const (
	varString varKind = iota
	varInt            // integer: @@name is a number
	varBool           // boolean: @@name is 1/0, SHOW VARIABLES says ON/OFF
	varFloat
)

// sysVar is the default of a system variable. session-only variables have no
// default of their own: their value always comes from SessionInfo.Vars.
type sysVar struct {
	kind        varKind
	value       any // string, int64 or bool
	sessionOnly bool
}

func str(s string) sysVar { return sysVar{kind: varString, value: s} }
func num(n int64) sysVar  { return sysVar{kind: varInt, value: n} }
func flag(b bool) sysVar  { return sysVar{kind: varBool, value: b} }

// systemVars are MariaDB 10.11's defaults for the variables that drivers and
// tools read at connect time (MariaDB and MySQL Connector/J's initial query,
// SQLAlchemy's dialect initialisation, the mariadb CLI's banner, pymysql,
// go-sql-driver) plus those a BI tool shows. version, warning_count and
// error_count are computed per catalog and session.
var systemVars = map[string]sysVar{
	"auto_increment_increment": num(1),
	"auto_increment_offset":    num(1),
	"autocommit":               flag(true),
	"big_tables":               flag(false),
	"character_set_client":     str(defaultCharset),
	"character_set_connection": str(defaultCharset),
	"character_set_database":   str(defaultCharset),
	"character_set_filesystem": str("binary"),
	"character_set_results":    str(defaultCharset),
	"character_set_server":     str(defaultCharset),
	"character_set_system":     str(systemCharset),
	"collation_connection":     str(defaultCollation),
	"collation_database":       str(defaultCollation),
	"collation_server":         str(defaultCollation),
	"connect_timeout":          num(10),
	"default_storage_engine":   str("InnoDB"),
	"default_week_format":      num(0),
	"div_precision_increment":  num(4),
	"error_count":              num(0),
	// explicit_defaults_for_timestamp is ON by default since MariaDB 10.10.
	"explicit_defaults_for_timestamp": flag(true),
	"foreign_key_checks":              flag(true),
	"group_concat_max_len":            num(1048576),
	"have_ssl":                        str("DISABLED"),
	"identity":                        num(0),
	"in_transaction":                  num(0),
	"init_connect":                    str(""),
	"interactive_timeout":             num(28800),
	"last_insert_id":                  num(0),
	"lc_messages":                     str("en_US"),
	"lc_time_names":                   str("en_US"),
	"license":                         str("GPL"),
	"lower_case_table_names":          num(0),
	"max_allowed_packet":              num(16777216),
	"max_connections":                 num(151),
	"max_execution_time":              num(0),
	// MariaDB prints max_statement_time with six decimals.
	"max_statement_time":      str("0.000000"),
	"net_buffer_length":       num(16384),
	"net_read_timeout":        num(30),
	"net_retry_count":         num(10),
	"net_write_timeout":       num(60),
	"old_passwords":           flag(false),
	"performance_schema":      flag(false),
	"protocol_version":        num(10),
	"query_cache_size":        num(0),
	"query_cache_type":        str("OFF"),
	"read_only":               flag(true), // dpproxy refuses every write
	"sql_auto_is_null":        flag(false),
	"sql_big_selects":         flag(true),
	"sql_mode":                str("STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION"),
	"sql_notes":               flag(true),
	"sql_quote_show_create":   flag(true),
	"sql_safe_updates":        flag(false),
	"sql_warnings":            flag(false),
	"storage_engine":          str("InnoDB"),
	"system_time_zone":        str("UTC"),
	"time_zone":               str("SYSTEM"),
	"transaction_isolation":   str("REPEATABLE-READ"),
	"transaction_read_only":   flag(false),
	"tx_isolation":            str("REPEATABLE-READ"),
	"tx_read_only":            flag(false),
	"unique_checks":           flag(true),
	"version":                 str(""), // the catalog's serverVersion
	"version_comment":         str("dpproxy — differentially private SQL proxy"),
	"version_compile_machine": str(compileMachine()),
	"version_compile_os":      str(compileOS()),
	"wait_timeout":            num(28800),
	"warning_count":           num(0),
	// sql_select_limit and max_join_size default to 2^64-1, beyond int64:
	// they are reported as their decimal text.
	"sql_select_limit": str("18446744073709551615"),
	"max_join_size":    str("18446744073709551615"),
	// dpproxy's own settings: the session (from the policy or SET) owns them.
	"dp_epsilon":   {kind: varFloat, sessionOnly: true},
	"dp_delta":     {kind: varFloat, sessionOnly: true},
	"dp_mechanism": {kind: varString, sessionOnly: true},
}

// compileMachine is @@version_compile_machine in MariaDB's spelling.
func compileMachine() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return runtime.GOARCH
}

// compileOS is @@version_compile_os in MariaDB's spelling ("Linux").
func compileOS() string {
	return strings.ToUpper(runtime.GOOS[:1]) + runtime.GOOS[1:]
}

// Variable returns the value of a system variable (case-insensitive name,
// without @@ and scope) as SELECT @@name reports it: numbers and booleans
// as int64, the rest as strings, NULL for a dpproxy setting the session does
// not have. The session's own value wins over the default. ok is false for a
// variable dpproxy does not know.
func (c *Catalog) Variable(name string, sess SessionInfo) (any, bool) {
	name = strings.ToLower(name)
	def, known := systemVars[name]
	if sess.Vars != nil {
		if v, ok := sess.Vars(name); ok {
			return v, true
		}
	}
	if !known {
		return nil, false
	}
	return typed(c.defaultValue(name, def, sess)), true
}

// Variables lists every system variable with its value as SHOW VARIABLES
// prints it (both as strings), sorted by name.
func (c *Catalog) Variables(sess SessionInfo) [][2]any {
	return c.variables(sess, false)
}

// variables lists the variables; global ignores the session's overrides for
// every variable that has a default of its own (SHOW GLOBAL VARIABLES).
func (c *Catalog) variables(sess SessionInfo, global bool) [][2]any {
	names := make([]string, 0, len(systemVars))
	for n := range systemVars {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([][2]any, len(names))
	for i, n := range names {
		def := systemVars[n]
		v := c.defaultValue(n, def, sess)
		if sess.Vars != nil && (!global || def.sessionOnly) {
			if sv, ok := sess.Vars(n); ok {
				v = sv
			}
		}
		out[i] = [2]any{n, shown(def.kind, v)}
	}
	return out
}

// defaultValue is the value of a known variable before session overrides.
func (c *Catalog) defaultValue(name string, def sysVar, sess SessionInfo) any {
	switch name {
	case "version":
		return c.version
	case "warning_count":
		return int64(len(sess.Warnings))
	}
	return def.value
}

// typed converts a default to what SELECT @@name returns.
func typed(v any) any {
	if b, ok := v.(bool); ok {
		if b {
			return int64(1)
		}
		return int64(0)
	}
	return v
}

// shown renders a value as SHOW VARIABLES prints it: booleans as ON/OFF
// (also when a session stored 1/0 or 'on'), NULL as the empty string.
func shown(kind varKind, v any) string {
	if kind == varBool {
		if s, ok := v.(string); ok {
			switch strings.ToUpper(s) {
			case "ON", "OFF":
				return strings.ToUpper(s)
			}
		}
		if t, isNull := eval.Truthy(v); !isNull {
			if t {
				return "ON"
			}
			return "OFF"
		}
	}
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return eval.ToString(v)
}
