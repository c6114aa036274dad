package pgcatalog

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/parser"
)

// fnSpec is one allow-listed function: how many arguments it takes, what
// type it returns (0: the first argument's) and how it is rendered in
// SQLite from its rendered arguments.
type fnSpec struct {
	min, max int // max -1: any number
	ret      uint32
	// catalog marks functions only a catalog query calls (version(),
	// pg_get_expr()); a query without relations that calls one is a
	// catalog query. lower() or count() alone are not.
	catalog bool
	render  func(q *query, f *parser.Func, a []string) (string, error)
}

// call renders name(args) under another name.
func call(name string) func(*query, *parser.Func, []string) (string, error) {
	return func(_ *query, f *parser.Func, a []string) (string, error) {
		distinct := ""
		if f.Distinct {
			distinct = "DISTINCT "
		}
		if f.Star {
			return name + "(*)", nil
		}
		return name + "(" + distinct + strings.Join(a, ", ") + ")", nil
	}
}

// padded renders name with the optional trailing arguments filled in.
func padded(name string, n int, fill string) func(*query, *parser.Func, []string) (string, error) {
	return func(_ *query, _ *parser.Func, a []string) (string, error) {
		for len(a) < n {
			a = append(a, fill)
		}
		return name + "(" + strings.Join(a, ", ") + ")", nil
	}
}

// constant renders a value that depends on the catalog or the session
// only, as a literal.
func constant(v func(q *query) any) func(*query, *parser.Func, []string) (string, error) {
	return func(q *query, _ *parser.Func, _ []string) (string, error) { return sqlLiteral(v(q)), nil }
}

// sqlText renders fixed SQL with the arguments substituted for %[1]s, ...
func sqlText(format string) func(*query, *parser.Func, []string) (string, error) {
	return func(_ *query, _ *parser.Func, a []string) (string, error) {
		args := make([]any, len(a))
		for i, s := range a {
			args[i] = s
		}
		return fmt.Sprintf(format, args...), nil
	}
}

// hidden is a function whose answer would reveal something of a private
// table (its size in bytes grows with its rows): it answers NULL, as
// PostgreSQL does for a relation it cannot find.
func hidden(*query, *parser.Func, []string) (string, error) { return "NULL", nil }

var functions map[string]fnSpec

func init() {
	str, name, boolean, i4, i8 := OIDText, OIDName, OIDBool, OIDInt4, OIDInt8
	functions = map[string]fnSpec{
		// Session and server.
		"version":          {0, 0, str, true, constant(func(q *query) any { return "PostgreSQL " + q.c.version + " (dpproxy)" })},
		"current_database": {0, 0, name, true, constant(func(q *query) any { return q.c.db })},
		"current_catalog":  {0, 0, name, true, constant(func(q *query) any { return q.c.db })},
		"current_schema":   {0, 0, name, true, constant(func(q *query) any { return q.c.schema })},
		"current_schemas":  {1, 1, OIDNameArray, true, currentSchemas},
		"current_user":     {0, 0, name, true, constant(func(q *query) any { return q.sess.User })},
		"session_user":     {0, 0, name, true, constant(func(q *query) any { return q.sess.User })},
		"current_role":     {0, 0, name, true, constant(func(q *query) any { return q.sess.User })},
		"user":             {0, 0, name, true, constant(func(q *query) any { return q.sess.User })},
		"current_setting":  {1, 2, str, true, currentSetting},
		// Input functions of the object types, for classification only:
		// clients write casts ('adult'::regclass), rendered by cast().
		"regclassin":        {1, 1, OIDRegclass, true, castOnly},
		"regtypein":         {1, 1, OIDRegtype, true, castOnly},
		"regnamespacein":    {1, 1, OIDRegnsp, true, castOnly},
		"pg_is_in_recovery": {0, 0, boolean, true, constant(func(*query) any { return false })},
		// Catalog lookups.
		"format_type":         {2, 2, str, true, call("pgcat_format_type")},
		"pg_get_userbyid":     {1, 1, name, true, getUserByID},
		"pg_table_is_visible": {1, 1, boolean, true, withCatalog("pgcat_table_visible")},
		// Every emulated type is in pg_catalog, on every search path.
		"pg_type_is_visible": {1, 1, boolean, true, sqlText("((%[1]s) IS NOT NULL)")},
		"obj_description":    {1, 2, str, true, sqlText("(SELECT description FROM pg_description WHERE objoid = (%[1]s) AND objsubid = 0)")},
		"shobj_description":  {2, 2, str, true, sqlText("(SELECT description FROM pg_description WHERE objoid = (%[1]s) AND objsubid = 0)")},
		"col_description":    {2, 2, str, true, sqlText("(SELECT description FROM pg_description WHERE objoid = (%[1]s) AND objsubid = (%[2]s))")},
		// adbin holds the default's SQL text as the backend reports it, so
		// decompiling it is the identity.
		"pg_get_expr":                {2, 3, str, true, sqlText("(%[1]s)")},
		"pg_encoding_to_char":        {1, 1, name, true, call("pgcat_encoding")},
		"pg_relation_is_publishable": {1, 1, boolean, true, constant(func(*query) any { return false })},
		// The emulation has no constraints, indexes, rules, triggers,
		// sequences or extended statistics, so every OID names none of
		// them: PostgreSQL answers NULL for such an OID.
		"pg_get_constraintdef":            {1, 2, str, true, hidden},
		"pg_get_indexdef":                 {1, 3, str, true, hidden},
		"pg_get_triggerdef":               {1, 2, str, true, hidden},
		"pg_get_ruledef":                  {1, 2, str, true, hidden},
		"pg_get_statisticsobjdef_columns": {1, 1, str, true, hidden},
		"pg_get_serial_sequence":          {2, 2, str, true, hidden},
		"pg_get_viewdef":                  {1, 2, str, true, hidden},
		// Sizes grow with a table's rows: hidden.
		"pg_table_size":            {1, 1, i8, true, hidden},
		"pg_relation_size":         {1, 2, i8, true, hidden},
		"pg_total_relation_size":   {1, 1, i8, true, hidden},
		"pg_indexes_size":          {1, 1, i8, true, hidden},
		"pg_database_size":         {1, 1, i8, true, hidden},
		"pg_size_pretty":           {1, 1, str, true, call("pgcat_size_pretty")},
		"has_table_privilege":      {2, 3, boolean, true, lastArg("pgcat_privilege")},
		"has_schema_privilege":     {2, 3, boolean, true, lastArg("pgcat_privilege")},
		"has_database_privilege":   {2, 3, boolean, true, lastArg("pgcat_privilege")},
		"has_column_privilege":     {3, 4, boolean, true, lastArg("pgcat_privilege")},
		"has_any_column_privilege": {2, 3, boolean, true, lastArg("pgcat_privilege")},
		"quote_ident":              {1, 1, str, false, call("pgcat_quote_ident")},
		// Regular expressions: the renderer turns ~ and ~* into these.
		"textregexeq":   {2, 2, boolean, false, sqlText("pgcat_regex(%[1]s, %[2]s, 0)")},
		"texticregexeq": {2, 2, boolean, false, sqlText("pgcat_regex(%[1]s, %[2]s, 1)")},
		"textlike":      {2, 3, boolean, false, sqlText("pgcat_like(%[1]s, %[2]s, %[3]s, 0)")},
		"texticlike":    {2, 3, boolean, false, sqlText("pgcat_like(%[1]s, %[2]s, %[3]s, 1)")},
		// Arrays (emulated as JSON arrays).
		"array_to_string":   {2, 3, str, false, padded("pgcat_array_to_string", 3, "NULL")},
		"array_upper":       {2, 2, i4, false, call("pgcat_array_length")},
		"array_length":      {2, 2, i4, false, call("pgcat_array_length")},
		"array_lower":       {2, 2, i4, false, sqlText("(CASE WHEN pgcat_array_length(%[1]s, %[2]s) IS NULL THEN NULL ELSE 1 END)")},
		"cardinality":       {1, 1, i4, false, sqlText("json_array_length(%[1]s)")},
		"json_build_object": {0, -1, OIDJSON, true, call("json_object")},
		// Set-returning functions in a select list.
		"unnest":              {1, 1, 0, true, srf("unnest")},
		"generate_subscripts": {2, 3, i4, true, srf("generate_subscripts")},
		"_pg_expandarray":     {1, 1, OIDText, true, srf("_pg_expandarray")},
		// Scalars.
		"lower": {1, 1, str, false, call("lower")}, "upper": {1, 1, str, false, call("upper")},
		"length": {1, 1, i4, false, call("length")}, "char_length": {1, 1, i4, false, call("length")},
		"character_length": {1, 1, i4, false, call("length")},
		"substr":           {2, 3, str, false, call("substr")}, "substring": {2, 3, str, false, call("substr")},
		"replace": {3, 3, str, false, call("replace")}, "coalesce": {1, -1, 0, false, call("coalesce")},
		"nullif": {2, 2, 0, false, call("nullif")}, "greatest": {1, -1, 0, false, call("max")},
		"least": {1, -1, 0, false, call("min")}, "concat": {1, -1, str, false, call("concat")},
		"btrim": {1, 2, str, false, call("trim")}, "trim": {1, 2, str, false, call("trim")},
		"ltrim": {1, 2, str, false, call("ltrim")}, "rtrim": {1, 2, str, false, call("rtrim")},
		"strpos": {2, 2, i4, false, call("instr")}, "abs": {1, 1, 0, false, call("abs")},
		"round": {1, 2, 0, false, call("round")},
		"left":  {2, 2, str, false, sqlText("substr(%[1]s, 1, %[2]s)")},
		// Aggregates and window functions over catalog rows.
		"count": {0, 1, i8, false, call("count")}, "min": {1, 1, 0, false, call("min")},
		"max": {1, 1, 0, false, call("max")}, "sum": {1, 1, 0, false, call("sum")},
		"avg":        {1, 1, OIDFloat8, false, call("avg")},
		"string_agg": {2, 2, str, false, call("group_concat")},
		"array_agg":  {1, 1, OIDTextArray, false, call("json_group_array")},
		"bool_and":   {1, 1, boolean, false, call("min")}, "bool_or": {1, 1, boolean, false, call("max")},
		"every":      {1, 1, boolean, false, call("min")},
		"row_number": {0, 0, i8, false, call("row_number")}, "rank": {0, 0, i8, false, call("rank")},
		"dense_rank": {0, 0, i8, false, call("dense_rank")},
	}
}

// withCatalog renders a call of a lookup function that takes the
// catalog's registry id first.
func withCatalog(name string) func(*query, *parser.Func, []string) (string, error) {
	return func(q *query, _ *parser.Func, a []string) (string, error) {
		return name + "(" + strconv.FormatInt(q.c.id, 10) + ", " + strings.Join(a, ", ") + ")", nil
	}
}

func castOnly(_ *query, f *parser.Func, _ []string) (string, error) {
	return "", &UnsupportedError{What: f.Name + "() (write a cast)"}
}

func lastArg(name string) func(*query, *parser.Func, []string) (string, error) {
	return func(_ *query, _ *parser.Func, a []string) (string, error) {
		return name + "(" + a[len(a)-1] + ")", nil
	}
}

func srf(name string) func(*query, *parser.Func, []string) (string, error) {
	return func(_ *query, _ *parser.Func, a []string) (string, error) {
		// The argument keeps the call from being evaluated once up front
		// as a constant expression, before any row.
		return "pgcat_srf(" + quoteString(name) + ", " + a[0] + ")", nil
	}
}

func currentSchemas(q *query, _ *parser.Func, a []string) (string, error) {
	all, _ := json.Marshal([]string{PGCatalog, q.c.schema})
	own, _ := json.Marshal([]string{q.c.schema})
	return "(CASE WHEN " + a[0] + " THEN " + quoteString(string(all)) + " ELSE " + quoteString(string(own)) + " END)", nil
}

func getUserByID(q *query, _ *parser.Func, a []string) (string, error) {
	return fmt.Sprintf("(CASE (%[1]s) WHEN %[2]d THEN %[3]s WHEN %[4]d THEN %[5]s ELSE 'unknown (OID=' || (%[1]s) || ')' END)",
		a[0], ownerOID, quoteString(ownerName), sessionOID, quoteString(q.sess.User)), nil
}

// currentSetting renders current_setting('name'[, missing_ok]) as the
// setting's value. The name must be a literal: the value is looked up
// when the query is rendered.
func currentSetting(q *query, f *parser.Func, _ []string) (string, error) {
	lit, ok := f.Args[0].(*parser.Literal)
	name, isString := lit.Value.(string)
	if !ok || !isString {
		return "", &UnsupportedError{What: "current_setting() of a name that is not a literal"}
	}
	v, err := q.c.Show(name, q.sess)
	if err != nil {
		if len(f.Args) == 2 {
			if b, ok := f.Args[1].(*parser.Literal); ok && b.Value == true {
				return "NULL", nil
			}
		}
		return "", err
	}
	return quoteString(v), nil
}

// refusedFunctions run SQL, read or write files or large objects, sleep,
// signal other sessions or change settings. Anything not in functions is
// refused anyway; these get a reason.
var refusedFunctions = map[string]string{
	"set_config": "changes settings", "pg_sleep": "sleeps", "pg_sleep_for": "sleeps", "pg_sleep_until": "sleeps",
	"pg_terminate_backend": "signals other sessions", "pg_cancel_backend": "signals other sessions",
	"pg_reload_conf": "reloads the server's configuration", "current_query": "shows the running statement",
	"pg_stat_file": "reads the server's files", "pg_column_size": "measures stored values",
}

var refusedPrefixes = []struct{ prefix, why string }{
	{"query_to_", "runs SQL"}, {"table_to_", "reads a table's rows"}, {"cursor_to_", "runs SQL"},
	{"schema_to_", "reads tables' rows"}, {"database_to_", "reads tables' rows"}, {"dblink", "runs SQL"},
	{"pg_read_", "reads the server's files"}, {"pg_ls_", "lists the server's files"}, {"lo_", "reads or writes large objects"},
	{"pg_file_", "writes the server's files"}, {"pg_stat_", "shows statistics of private tables or other sessions"},
	{"xpath", "runs on stored data"},
}

// function finds an allow-listed function, or says why it is refused.
func function(f *parser.Func) (fnSpec, error) {
	name := f.Name
	if why, ok := refusedFunctions[name]; ok {
		return fnSpec{}, refused("function %s %s; catalog queries may not call it", name, why)
	}
	for _, p := range refusedPrefixes {
		if strings.HasPrefix(name, p.prefix) {
			return fnSpec{}, refused("function %s %s; catalog queries may not call it", name, p.why)
		}
	}
	spec, ok := functions[name]
	schemaOK := f.Schema == "" || f.Schema == PGCatalog || (f.Schema == InformationSchema && name == "_pg_expandarray")
	if !ok || !schemaOK {
		full := name
		if f.Schema != "" {
			full = f.Schema + "." + name
		}
		return fnSpec{}, refused("function %s is not available in catalog queries", full)
	}
	if len(f.Args) < spec.min || (spec.max >= 0 && len(f.Args) > spec.max) {
		return fnSpec{}, &UnsupportedError{What: fmt.Sprintf("%s() with %d arguments", name, len(f.Args))}
	}
	if f.Star && name != "count" {
		return fnSpec{}, &UnsupportedError{What: name + "(*)"}
	}
	return spec, nil
}
