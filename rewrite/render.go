package rewrite

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/parser"
)

// renderer writes model expressions as SQL of one backend dialect. String
// literals and parameters become bind arguments, so no value is ever spliced
// into SQL text.
type renderer struct {
	dialect parser.Dialect
	params  []any // the client's parameters ("?" / "$n"), by index
	derived int   // unnamed derived tables rendered so far, for their aliases
	// column renders a column reference; nil means the bare quoted name.
	column func(*parser.ColumnRef) (string, error)
	// aggregates may be rendered (public tables only).
	aggregates map[string]bool
	// display renders strings as plain 'quoted' text, for messages and
	// canonical forms; never for SQL sent to a backend.
	display bool
	// dateColumn reports whether an expression is a date column: the
	// difference of two is rendered in days (dates.go).
	dateColumn func(parser.Expr) bool
	// extend renders an expression before the cases below; handled false
	// falls through to them. The catalog renderer (catalog.go) uses it for
	// the constructs only catalog queries may contain.
	extend func(parser.Expr) (sql string, handled bool, err error)
	// total, when set, makes every expression of a DP statement total: it
	// cannot fail on a row's value and costs a bounded time per row
	// (total.go). numeric is set while rendering a value that flows into
	// arithmetic: its columns are then clamped to their policy bounds.
	total   *analysis
	numeric bool
}

func (r *renderer) ident(name string) string { return quoteIdent(r.dialect, name) }

func quoteIdent(d parser.Dialect, name string) string {
	if d == parser.MySQL {
		return "`" + strings.ReplaceAll(name, "`", "``") + "`"
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// bind renders a value as an SQL literal of the dialect. Values are written
// inline rather than as bind parameters because the same expression may be
// rendered several times in one statement (a GROUP BY key appears in the
// select list, the window partition and the public-value filter), which
// positional "?" parameters cannot follow. Strings are escaped so that no
// SQL mode can change their meaning: MySQL gets a hex literal with a
// character-set introducer (immune to NO_BACKSLASH_ESCAPES and
// ANSI_QUOTES), PostgreSQL an E” string with both quote and backslash
// escaped, SQLite a ” string (SQLite has no backslash escapes).
func (r *renderer) bind(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return number(x)
	case bool:
		if x {
			return "TRUE"
		}
		return "FALSE"
	case []byte:
		return r.stringLiteral(string(x))
	case string:
		return r.stringLiteral(x)
	}
	return r.stringLiteral(fmt.Sprint(v))
}

func (r *renderer) stringLiteral(s string) string {
	if r.display {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	switch r.dialect {
	case parser.MySQL:
		return "_utf8mb4 X'" + hex.EncodeToString([]byte(s)) + "'"
	case parser.PostgreSQL:
		return "E'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// random is the dialect's uniform random function, used to pick which rows
// and groups of a unit survive contribution bounding.
func (r *renderer) random() string {
	if r.dialect == parser.MySQL {
		return "RAND()"
	}
	return "random()"
}

// number renders a float constant exactly (strconv 'g' -1 round-trips).
func number(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if strings.ContainsAny(s, "e") {
		// Keep exponent forms valid in every dialect.
		return "(" + s + ")"
	}
	return s
}

// clamp renders x clamped to [lo, hi] with NULL kept NULL. CASE is used rather
// than LEAST/GREATEST because PostgreSQL's GREATEST ignores NULLs, which would
// turn a missing value into the lower bound.
func (r *renderer) clamp(x string, lo, hi float64) string {
	return fmt.Sprintf("(CASE WHEN %[1]s < %[2]s THEN %[2]s WHEN %[1]s > %[3]s THEN %[3]s ELSE %[1]s END)", x, number(lo), number(hi))
}

func (r *renderer) expr(e parser.Expr) (string, error) {
	if r.extend != nil {
		if s, handled, err := r.extend(e); handled || err != nil {
			return s, err
		}
	}
	if r.total != nil {
		return r.totalExpr(e)
	}
	return r.node(e)
}

// node renders one expression node; its children go through expr.
func (r *renderer) node(e parser.Expr) (string, error) {
	switch e := e.(type) {
	case *parser.ColumnRef:
		if r.column != nil {
			return r.column(e)
		}
		return r.ident(e.Name), nil
	case *parser.Literal:
		return r.literal(e)
	case *parser.Param:
		if e.Index < 0 || e.Index >= len(r.params) {
			return "", fmt.Errorf("parameter %d has no value", e.Index+1)
		}
		return r.bind(r.params[e.Index]), nil
	case *parser.Unary:
		x, err := r.expr(e.X)
		if err != nil {
			return "", err
		}
		switch e.Op {
		case parser.OpNot:
			return "(NOT " + x + ")", nil
		case parser.OpNeg:
			return "(- " + x + ")", nil // a space: "--1" would start a comment
		}
		return "", unsupported("operator %s", e.Op)
	case *parser.Binary:
		return r.binary(e)
	case *parser.Func:
		if r.aggregates[e.Name] && e.Schema == "" && !e.Over {
			return r.aggregateCall(e)
		}
		if unit, arg, ok := datePart(e); ok {
			s, err := r.expr(arg)
			if err != nil {
				return "", err
			}
			return r.datePartSQL(unit, s), nil
		}
		if _, ok := scalarFuncs[e.Name]; !ok || e.Schema != "" || e.Over || e.Distinct || e.Star {
			return "", refuse("function %s is not allowed in a differentially private query", strings.ToUpper(e.Name))
		}
		args := make([]string, len(e.Args))
		for i, a := range e.Args {
			s, err := r.expr(a)
			if err != nil {
				return "", err
			}
			args[i] = s
		}
		if e.Name == "if" {
			// IF(c, a, b) is MySQL's; CASE is every dialect's.
			if len(args) != 3 {
				return "", unsupported("IF with %d arguments", len(args))
			}
			return "(CASE WHEN " + args[0] + " THEN " + args[1] + " ELSE " + args[2] + " END)", nil
		}
		return strings.ToUpper(r.funcName(e.Name)) + "(" + strings.Join(args, ", ") + ")", nil
	case *parser.Case:
		return r.caseExpr(e)
	case *parser.Between:
		x, err := r.expr(e.X)
		if err != nil {
			return "", err
		}
		lo, err := r.expr(e.Lo)
		if err != nil {
			return "", err
		}
		hi, err := r.expr(e.Hi)
		if err != nil {
			return "", err
		}
		not := ""
		if e.Not {
			not = "NOT "
		}
		return fmt.Sprintf("(%s %sBETWEEN %s AND %s)", x, not, lo, hi), nil
	case *parser.In:
		if e.Sub != nil {
			return "", refuse("subqueries are not allowed in a differentially private query")
		}
		x, err := r.expr(e.X)
		if err != nil {
			return "", err
		}
		items := make([]string, len(e.List))
		for i, it := range e.List {
			if items[i], err = r.expr(it); err != nil {
				return "", err
			}
		}
		not := ""
		if e.Not {
			not = "NOT "
		}
		return fmt.Sprintf("(%s %sIN (%s))", x, not, strings.Join(items, ", ")), nil
	case *parser.IsNull:
		x, err := r.expr(e.X)
		if err != nil {
			return "", err
		}
		if e.Not {
			return "(" + x + " IS NOT NULL)", nil
		}
		return "(" + x + " IS NULL)", nil
	case *parser.IsBool:
		x, err := r.expr(e.X)
		if err != nil {
			return "", err
		}
		v := "FALSE"
		if e.Value {
			v = "TRUE"
		}
		not := ""
		if e.Not {
			not = "NOT "
		}
		return fmt.Sprintf("(%s IS %s%s)", x, not, v), nil
	case *parser.Like:
		return r.like(e)
	case *parser.Cast:
		x, err := r.expr(e.X)
		if err != nil {
			return "", err
		}
		t, err := r.castType(e.Type)
		if err != nil {
			return "", err
		}
		return "CAST(" + x + " AS " + t + ")", nil
	case *parser.Subquery:
		return "", refuse("subqueries are not allowed in a differentially private query")
	case *parser.Variable:
		return "", refuse("variables are not allowed in a differentially private query")
	}
	return "", unsupported("expression %T", e)
}

func (r *renderer) literal(l *parser.Literal) (string, error) {
	switch v := l.Value.(type) {
	case nil:
		return "NULL", nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case float64:
		if l.IsDecimal && l.Text != "" {
			if _, err := strconv.ParseFloat(l.Text, 64); err == nil {
				return l.Text, nil
			}
		}
		return number(v), nil
	case string:
		return r.bind(v), nil
	case bool:
		if v {
			return "TRUE", nil
		}
		return "FALSE", nil
	}
	return "", unsupported("literal of type %T", l.Value)
}

var binaryOps = map[parser.Op]string{
	parser.OpAdd: "+", parser.OpSub: "-", parser.OpMul: "*", parser.OpDiv: "/", parser.OpMod: "%",
	parser.OpEQ: "=", parser.OpNE: "<>", parser.OpLT: "<", parser.OpLE: "<=", parser.OpGT: ">", parser.OpGE: ">=",
	parser.OpAnd: "AND", parser.OpOr: "OR",
}

func (r *renderer) binary(e *parser.Binary) (string, error) {
	l, err := r.expr(e.L)
	if err != nil {
		return "", err
	}
	rr, err := r.expr(e.R)
	if err != nil {
		return "", err
	}
	return r.binaryOp(e, l, rr)
}

// binaryOp writes l op rr, both rendered.
func (r *renderer) binaryOp(e *parser.Binary, l, rr string) (string, error) {
	if e.Op == parser.OpSub && r.dateColumn != nil && r.dateColumn(e.L) && r.dateColumn(e.R) {
		return r.dateDiffSQL(l, rr), nil
	}
	switch e.Op {
	case parser.OpAdd, parser.OpSub, parser.OpMul, parser.OpDiv, parser.OpMod, parser.OpIntDiv:
		// A predicate used as a number (MySQL's TRUE is 1) is written as
		// a CASE, which PostgreSQL's booleans need.
		l, rr = r.asNumber(e.L, l), r.asNumber(e.R, rr)
	}
	switch e.Op {
	case parser.OpIntDiv:
		if r.dialect == parser.MySQL {
			return "(" + l + " DIV " + rr + ")", nil
		}
		return "(CAST(" + l + " AS INTEGER) / CAST(" + rr + " AS INTEGER))", nil
	case parser.OpXor:
		if r.dialect == parser.MySQL {
			return "(" + l + " XOR " + rr + ")", nil
		}
		return "((" + l + ") <> (" + rr + "))", nil
	case parser.OpNullEQ:
		switch r.dialect {
		case parser.MySQL:
			return "(" + l + " <=> " + rr + ")", nil
		case parser.SQLite:
			return "(" + l + " IS " + rr + ")", nil
		}
		return "(" + l + " IS NOT DISTINCT FROM " + rr + ")", nil
	case parser.OpDiv:
		// Division is real division in every dialect, as in MySQL.
		if r.dialect != parser.MySQL {
			return "(CAST(" + l + " AS DOUBLE PRECISION) / " + rr + ")", nil
		}
	case parser.OpConcat:
		if r.dialect == parser.MySQL {
			return "CONCAT(" + l + ", " + rr + ")", nil
		}
		return "(" + l + " || " + rr + ")", nil
	}
	op, ok := binaryOps[e.Op]
	if !ok {
		return "", unsupported("operator %s", e.Op)
	}
	return "(" + l + " " + op + " " + rr + ")", nil
}

func (r *renderer) caseExpr(e *parser.Case) (string, error) {
	var b strings.Builder
	b.WriteString("(CASE")
	if e.Operand != nil {
		s, err := r.expr(e.Operand)
		if err != nil {
			return "", err
		}
		b.WriteString(" " + s)
	}
	for _, w := range e.Whens {
		c, err := r.expr(w.Cond)
		if err != nil {
			return "", err
		}
		v, err := r.expr(w.Result)
		if err != nil {
			return "", err
		}
		b.WriteString(" WHEN " + c + " THEN " + v)
	}
	if e.Else != nil {
		s, err := r.expr(e.Else)
		if err != nil {
			return "", err
		}
		b.WriteString(" ELSE " + s)
	}
	b.WriteString(" END)")
	return b.String(), nil
}

func (r *renderer) like(e *parser.Like) (string, error) {
	x, err := r.expr(e.X)
	if err != nil {
		return "", err
	}
	p, err := r.expr(e.Pattern)
	if err != nil {
		return "", err
	}
	op := "LIKE"
	if e.CaseInsensitive {
		if r.dialect == parser.PostgreSQL {
			op = "ILIKE"
		} else {
			x, p = "LOWER("+x+")", "LOWER("+p+")"
		}
	}
	if e.Not {
		op = "NOT " + op
	}
	s := "(" + x + " " + op + " " + p
	if e.Escape != nil {
		esc, err := r.expr(e.Escape)
		if err != nil {
			return "", err
		}
		s += " ESCAPE " + esc
	}
	return s + ")", nil
}

func (r *renderer) funcName(name string) string {
	switch {
	case r.dialect == parser.SQLite && (name == "substring"):
		return "substr"
	case r.dialect != parser.MySQL && name == "ifnull":
		return "coalesce"
	case r.dialect != parser.MySQL && (name == "lcase"):
		return "lower"
	case r.dialect != parser.MySQL && (name == "ucase"):
		return "upper"
	case r.dialect != parser.MySQL && name == "ceiling":
		return "ceil"
	case r.dialect == parser.SQLite && name == "greatest":
		return "max"
	case r.dialect == parser.SQLite && name == "least":
		return "min"
	case r.dialect != parser.PostgreSQL && name == "btrim":
		return "trim"
	}
	return name
}

func (r *renderer) castType(t string) (string, error) {
	switch t {
	case "int":
		if r.dialect == parser.MySQL {
			return "SIGNED", nil
		}
		return "BIGINT", nil
	case "float", "decimal":
		if r.dialect == parser.MySQL {
			return "DOUBLE", nil
		}
		return "DOUBLE PRECISION", nil
	case "string":
		if r.dialect == parser.MySQL {
			return "CHAR", nil
		}
		return "TEXT", nil
	case "date":
		return "DATE", nil
	}
	return "", unsupported("CAST to %s", t)
}

func (r *renderer) aggregateCall(e *parser.Func) (string, error) {
	if e.Star {
		return strings.ToUpper(e.Name) + "(*)", nil
	}
	args := make([]string, len(e.Args))
	for i, a := range e.Args {
		s, err := r.expr(a)
		if err != nil {
			return "", err
		}
		args[i] = s
	}
	distinct := ""
	if e.Distinct {
		distinct = "DISTINCT "
	}
	return strings.ToUpper(e.Name) + "(" + distinct + strings.Join(args, ", ") + ")", nil
}

// isPredicate reports whether e is a boolean-valued expression.
func isPredicate(e parser.Expr) bool {
	switch n := e.(type) {
	case *parser.Binary:
		switch n.Op {
		case parser.OpEQ, parser.OpNE, parser.OpLT, parser.OpLE, parser.OpGT, parser.OpGE,
			parser.OpNullEQ, parser.OpAnd, parser.OpOr, parser.OpXor, parser.OpRegex:
			return true
		}
	case *parser.Unary:
		return n.Op == parser.OpNot
	case *parser.Between, *parser.In, *parser.IsNull, *parser.IsBool, *parser.Like:
		return true
	}
	return false
}

// asNumber writes a predicate as 1/0 (NULL stays NULL) where a number is
// needed; other expressions are returned as rendered.
func (r *renderer) asNumber(e parser.Expr, sql string) string {
	if !isPredicate(e) {
		return sql
	}
	return "(CASE WHEN " + sql + " THEN 1 WHEN NOT " + sql + " THEN 0 END)"
}
