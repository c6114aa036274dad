package parser

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// frameOptionNonDefault is FRAMEOPTION_NONDEFAULT of PostgreSQL's
// nodes/parsenodes.h: set when OVER (...) has a frame clause.
const frameOptionNonDefault = 0x00001

// pgFuncName returns the unqualified name of a (possibly schema-qualified)
// function name list.
func pgFuncName(names []*pg.Node) string {
	if len(names) == 0 {
		return ""
	}
	return names[len(names)-1].GetString_().GetSval()
}

// funcCall converts a function call, aggregate or window function.
func (c *pgConverter) funcCall(f *pg.FuncCall) (Expr, error) {
	switch {
	case f.AggFilter != nil:
		return nil, &UnsupportedError{What: "FILTER (WHERE ...)"}
	case f.FuncVariadic:
		return nil, &UnsupportedError{What: "VARIADIC"}
	}
	out := &Func{Distinct: f.AggDistinct, Star: f.AggStar}
	switch len(f.Funcname) {
	case 1:
	case 2:
		out.Schema = strings.ToLower(f.Funcname[0].GetString_().GetSval())
	default:
		return nil, &UnsupportedError{What: "database-qualified function name"}
	}
	out.Name = strings.ToLower(pgFuncName(f.Funcname))
	// SQL-syntax forms (EXTRACT(year FROM d), TRIM(...), x AT TIME ZONE z)
	// are calls of pg_catalog functions the user did not qualify.
	if f.Funcformat == pg.CoercionForm_COERCE_SQL_SYNTAX && out.Schema == "pg_catalog" {
		out.Schema = ""
	}
	var err error
	if out.Args, err = c.exprs(f.Args); err != nil {
		return nil, err
	}
	// WITHIN GROUP (ORDER BY x) and an aggregate's own ORDER BY
	// (string_agg(a, ',' ORDER BY a)) both order the aggregated rows.
	if out.WithinGroup, err = c.orderBy(f.AggOrder); err != nil {
		return nil, err
	}
	if f.Over != nil {
		out.Over = true
		if out.Window, err = c.window(f.Over); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *pgConverter) window(w *pg.WindowDef) (*WindowSpec, error) {
	switch {
	case w.Name != "" || w.Refname != "":
		return nil, &UnsupportedError{What: "named window"}
	case w.FrameOptions&frameOptionNonDefault != 0:
		return nil, &UnsupportedError{What: "window frame clause"}
	}
	out := &WindowSpec{}
	var err error
	if out.PartitionBy, err = c.exprs(w.PartitionClause); err != nil {
		return nil, err
	}
	if out.OrderBy, err = c.orderBy(w.OrderClause); err != nil {
		return nil, err
	}
	return out, nil
}

// namedCall is a construct the grammar has its own node for (COALESCE,
// GREATEST, LEAST) as the function call it is on the MySQL side.
func (c *pgConverter) namedCall(name string, args []*pg.Node) (Expr, error) {
	list, err := c.exprs(args)
	if err != nil {
		return nil, err
	}
	return &Func{Name: name, Args: list}, nil
}

// pgSQLValueFunctions names the SQL-standard functions written without
// parentheses. USER and CURRENT_ROLE are current_user, CURRENT_CATALOG is
// current_database() (PostgreSQL manual, "System Information Functions").
var pgSQLValueFunctions = map[pg.SQLValueFunctionOp]string{
	pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:        "current_date",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME:        "current_time",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME_N:      "current_time",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP:   "current_timestamp",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N: "current_timestamp",
	pg.SQLValueFunctionOp_SVFOP_LOCALTIME:           "localtime",
	pg.SQLValueFunctionOp_SVFOP_LOCALTIME_N:         "localtime",
	pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP:      "localtimestamp",
	pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:    "localtimestamp",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:        "current_user",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_USER:        "current_user",
	pg.SQLValueFunctionOp_SVFOP_USER:                "current_user",
	pg.SQLValueFunctionOp_SVFOP_SESSION_USER:        "session_user",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:     "current_database",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:      "current_schema",
}

// pgSQLValueFunction converts CURRENT_USER, CURRENT_TIMESTAMP(3), ... into
// calls; a precision is the one argument.
func pgSQLValueFunction(f *pg.SQLValueFunction) (Expr, error) {
	name, ok := pgSQLValueFunctions[f.Op]
	if !ok {
		return nil, &UnsupportedError{What: "SQL value function " + f.Op.String()}
	}
	out := &Func{Name: name}
	switch f.Op {
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME_N, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N,
		pg.SQLValueFunctionOp_SVFOP_LOCALTIME_N, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		out.Args = []Expr{&Literal{Value: int64(f.Typmod)}}
	}
	return out, nil
}

func (c *pgConverter) typeCast(t *pg.TypeCast) (Expr, error) {
	typ, err := pgTypeName(t.TypeName)
	if err != nil {
		return nil, err
	}
	x, err := c.expr(t.Arg)
	if err != nil {
		return nil, err
	}
	return &Cast{X: x, Type: typ}, nil
}

// pgTypeNames normalises PostgreSQL's type names to the model's (see Cast).
// The grammar spells SQL's type keywords by their internal names: INTEGER is
// pg_catalog.int4, DOUBLE PRECISION pg_catalog.float8, VARCHAR
// pg_catalog.varchar, CHAR(n) pg_catalog.bpchar, TIMESTAMP
// pg_catalog.timestamp.
var pgTypeNames = map[string]string{
	"int2": "int", "int4": "int", "int8": "int", "smallint": "int", "integer": "int", "int": "int", "bigint": "int",
	"float4": "float", "float8": "float", "real": "float", "float": "float", "double precision": "float",
	"numeric": "decimal", "decimal": "decimal",
	"text": "string", "varchar": "string", "bpchar": "string", "char": "string", "name": "string",
	"character varying": "string", "character": "string",
	"date":      "date",
	"timestamp": "datetime", "timestamptz": "datetime",
	"time": "time", "timetz": "time",
	"bool": "bool", "boolean": "bool",
	"bytea": "binary",
}

// pgTypeName normalises a type name. Names the model has no word for keep
// their lower-case name (regclass, oid, interval, json); schemas other than
// pg_catalog stay in front; array types end in "[]".
func pgTypeName(t *pg.TypeName) (string, error) {
	switch {
	case t == nil || len(t.Names) == 0:
		return "", &UnsupportedError{What: "cast without a type"}
	case t.Setof:
		return "", &UnsupportedError{What: "SETOF type"}
	case t.PctType:
		return "", &UnsupportedError{What: "%TYPE"}
	}
	parts := make([]string, 0, len(t.Names))
	for _, n := range t.Names {
		parts = append(parts, strings.ToLower(n.GetString_().GetSval()))
	}
	if parts[0] == "pg_catalog" {
		parts = parts[1:]
	}
	name := strings.Join(parts, ".")
	if norm, ok := pgTypeNames[name]; ok {
		name = norm
	}
	for range t.ArrayBounds {
		name += "[]"
	}
	return name, nil
}
