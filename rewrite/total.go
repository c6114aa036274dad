package rewrite

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
)

// The SQL of a DP statement is total (issue 11; DESIGN.md, "Everything
// around a release is part of the release"): whatever a row holds, the
// backend neither raises an error nor spends more than a bounded time on
// it, so whether a statement answers, and how long it takes, says nothing
// about one person (Haeberlen, Pierce, Narayan, "Differential Privacy Under
// Fire", USENIX Security 2011). This is built into the renderer, not
// checked against a list of dangerous strings: when renderer.total is set
// (every row-level expression of Analyze and Training), expressions are
// rendered by totalExpr, which
//
//   - renders arithmetic only where bound (bounds.go) gives each operand
//     and the result a finite interval within ±maxBound, and clamps every
//     column that flows into arithmetic to its policy bounds, so that the
//     interval holds in the backend and neither int64 nor double arithmetic
//     can overflow. Integer operands are widened to BIGINT (PostgreSQL's
//     int4 overflows at 2³¹; a MySQL BIGINT UNSIGNED operand makes 0 − 1 an
//     error). Comparisons keep their columns as they are: they cannot fail,
//     and their meaning and the backend's indexes stay;
//   - writes every divisor as NULLIF(d, 0) (PostgreSQL raises on a zero
//     divisor, MySQL and SQLite return NULL: now all three return NULL);
//   - guards SQRT, LN, LOG, POWER and EXP on their domain, with NULL outside
//     it (MySQL's own behaviour for SQRT and LN);
//   - on PostgreSQL, flushes non-integer factors and dividends smaller than
//     1e-150 in magnitude to 0: PostgreSQL raises "value out of range:
//     underflow" when a product or quotient of non-zero doubles rounds to 0
//     (float.c, check_float8_val), which two factors of at least 1e-150 and
//     divisors of at most maxBound cannot do;
//   - guards a cast from text to a number on PostgreSQL with a regular
//     expression that only inputs the cast accepts can match, and refuses a
//     cast of text to DATE there (no pattern tells a valid date: 2020-02-31).
//     MariaDB (strict sql_mode) and SQLite never raise on a cast in a SELECT:
//     they return 0, NULL or a saturated value with a warning (checked on
//     MariaDB 10.11 and SQLite 3.49 by TestTotalSQLOnBackends);
//   - bounds the size of every string a row can produce (REPLACE's growth
//     factor) and the work of LIKE (a constant pattern with a few %);
//   - clamps dates to their policy bounds before a difference or a date part
//     (PostgreSQL raises on 'infinity' − date and on casting the year of an
//     infinite date to an integer);
//   - refuses a rendered expression larger than maxTotalSQL: guards repeat
//     their operand, and the per-row cost is proportional to the SQL's size.
//
// The aggregation around the expressions is total too (sql.go, quantile.go):
// sums of squares are computed in DOUBLE (NUMERIC on PostgreSQL), SQLite's
// integer SUM, which raises on overflow, sums REAL values.

const (
	// maxGrowth bounds the factor by which an expression's string output
	// can exceed the total length of the strings it reads (REPLACE, case
	// mappings).
	maxGrowth = 16
	// maxLikeWildcards bounds the % of a LIKE pattern: the backends'
	// matchers backtrack at each %, so their worst case is polynomial in the
	// subject's length with the number of % as exponent.
	maxLikeWildcards = 4
	// maxLikePattern bounds a LIKE pattern's length in bytes (SQLite raises
	// "LIKE or GLOB pattern too complex" past 50,000, when the row is read).
	maxLikePattern = 1000
	// maxTotalSQL bounds one rendered row-level expression, in bytes.
	maxTotalSQL = 1 << 20
	// pgFlush is the magnitude below which PostgreSQL's non-integer factors
	// and dividends are flushed to 0.
	pgFlush = 1e-150
	// caseGrowth is the most code points a case mapping makes of one
	// (Unicode SpecialCasing.txt, e.g. U+0390 uppercases to three).
	caseGrowth = 3
)

// funcClass says how the totality rules treat an allowed function.
type funcClass int

const (
	funcArith  funcClass = iota + 1 // numeric in, numeric out: needs a bound
	funcValue                       // passes one of its arguments through
	funcString                      // reads strings
	funcDate                        // a date part
)

// scalarFuncs is the allow-list of functions that may run in the backend on
// the rows of a DP query. Each has a per-row cost bound and cannot fail on
// any value its arguments can take once the rules of this file apply; a
// function not listed here is refused. n is the length of the string
// arguments, m of constant ones (both bounded: the statement size limit and
// maxGrowth), d the digits of a number (at most ~20 for a bounded value,
// PostgreSQL's numeric up to 16,383 + 131,072 digits as stored).
//
//	function                cost per row   why it cannot fail
//	ABS SIGN                O(d)           operand clamped, |x| <= maxBound (no ABS(int64 min))
//	FLOOR CEIL CEILING      O(d)           operand bounded
//	ROUND(x[, k])           O(d)           operand and k bounded; k is clamped by every backend
//	MOD(a, b), %            O(d²)          NULLIF(b, 0); operands bounded
//	SQRT                    O(d)           CASE WHEN x >= 0
//	LN LOG                  O(d)           CASE WHEN x > 0; LOG(b, x) only for a constant b > 0, b <> 1
//	EXP                     O(d)           x <= ln(maxBound); 0 below -700 (PostgreSQL underflow)
//	POWER POW               O(d·log e)     constant e; NULLIF(b, 0) for e < 0, b >= 0 for a fractional e
//	YEAR MONTH DAY EXTRACT  O(1)           date clamped to its bounds (or isfinite on PostgreSQL)
//	COALESCE IFNULL NULLIF  O(args)        pass values through
//	GREATEST LEAST IF       O(args)        pass values through
//	LOWER UPPER LCASE UCASE O(n)           output <= 3n code points (caseGrowth)
//	LENGTH CHAR_LENGTH      O(n)           —
//	TRIM LTRIM RTRIM BTRIM  O(n·m)         output <= n
//	SUBSTRING SUBSTR        O(n)           numeric positions; PostgreSQL's negative length is made 0
//	LEFT RIGHT              O(n)           numeric length; output <= n
//	CONCAT, ||              O(Σn)          output is the sum of its inputs
//	REPLACE(x, f, t)        O(n·m)         constant f and t; output <= n·max(1, |t|/|f|), product <= maxGrowth
//	LIKE (operator)         O(n^(w+1)·m)   constant pattern and escape, w <= maxLikeWildcards
//
// Functions with unbounded output (REPEAT, LPAD, RPAD, SPACE), regular
// expressions (whose compilation can fail and whose matching can take
// exponential time), SLEEP, BENCHMARK and anything that reads or writes
// outside the row are not listed.
var scalarFuncs = map[string]funcClass{
	"abs": funcArith, "ceil": funcArith, "ceiling": funcArith, "floor": funcArith, "round": funcArith, "sign": funcArith,
	"mod": funcArith, "sqrt": funcArith, "power": funcArith, "pow": funcArith, "exp": funcArith, "ln": funcArith, "log": funcArith,
	"lower": funcString, "upper": funcString, "lcase": funcString, "ucase": funcString, "length": funcString, "char_length": funcString,
	"trim": funcString, "ltrim": funcString, "rtrim": funcString, "substring": funcString, "substr": funcString, "concat": funcString,
	"replace": funcString, "left": funcString, "right": funcString, "btrim": funcString,
	"coalesce": funcValue, "ifnull": funcValue, "nullif": funcValue, "greatest": funcValue, "least": funcValue, "if": funcValue,
	"year": funcDate, "month": funcDate, "day": funcDate,
}

// totalExpr renders e under the totality rules.
func (r *renderer) totalExpr(e parser.Expr) (string, error) {
	s, err := r.totalNode(e)
	if err == nil && len(s) > maxTotalSQL {
		return "", refuse("%s is too large once each of its operations is guarded (%d bytes of SQL, at most %d): simplify it",
			short(r.total.text(e)), len(s), maxTotalSQL)
	}
	return s, err
}

func (r *renderer) totalNode(e parser.Expr) (string, error) {
	switch n := e.(type) {
	case *parser.ColumnRef:
		if r.numeric {
			return r.clampedColumn(n)
		}
		return r.node(e)
	case *parser.Unary:
		if n.Op == parser.OpNeg {
			return r.arithmetic(e)
		}
	case *parser.Binary:
		switch n.Op {
		case parser.OpAdd, parser.OpSub, parser.OpMul, parser.OpDiv, parser.OpMod, parser.OpIntDiv:
			return r.arithmetic(e)
		}
	case *parser.Case:
		return r.totalCase(n)
	case *parser.Func:
		return r.totalFunc(n)
	case *parser.Cast:
		return r.totalCast(n)
	case *parser.Like:
		return r.totalLike(n)
	case *parser.Literal, *parser.Param:
		return r.node(e)
	}
	// Predicates and everything else: their operands are compared, not
	// computed with.
	return r.with(false, e)
}

// with renders the node e with numeric set to v for its children.
func (r *renderer) with(v bool, e parser.Expr) (string, error) {
	saved := r.numeric
	r.numeric = v
	defer func() { r.numeric = saved }()
	return r.node(e)
}

// sub renders a child expression with numeric set to v.
func (r *renderer) sub(v bool, e parser.Expr) (string, error) {
	saved := r.numeric
	r.numeric = v
	defer func() { r.numeric = saved }()
	return r.expr(e)
}

// clampedColumn renders a column that flows into arithmetic, clamped to the
// interval bound gives it (NULL stays NULL), so the interval holds in the
// backend whatever the row holds.
func (r *renderer) clampedColumn(ref *parser.ColumnRef) (string, error) {
	s, err := r.node(ref)
	if err != nil {
		return "", err
	}
	b, err := r.total.bound(ref)
	if err != nil {
		// Not an operand of arithmetic (which needs the bound and was
		// refused without it): a value passed through to a comparison.
		return s, nil
	}
	return r.clamp(s, b.lo, b.hi), nil
}

// needBound is the bound of an arithmetic expression, or the refusal that
// names the sub-expression without one.
func (r *renderer) needBound(e parser.Expr) (interval, error) {
	b, err := r.total.bound(e)
	if err == nil {
		return b, nil
	}
	var nb *noBoundError
	if errors.As(err, &nb) {
		return interval{}, refuse("%s needs a public bound for %s: arithmetic in a differentially private query runs only on values with public bounds, so that no row can make it fail (add lower and upper for its columns to the policy of %s)",
			short(r.total.text(e)), nb.expr, r.total.table.Name)
	}
	return interval{}, err
}

// operand renders an operand of arithmetic: clamped columns, a predicate
// as 1/0, an integer widened to a 64-bit signed integer when widen is set
// (a literal keeps its own type), and on PostgreSQL a non-integer flushed
// to 0 below pgFlush when flush is set.
func (r *renderer) operand(x parser.Expr, widen, flush bool) (string, error) {
	s, err := r.sub(true, x)
	if err != nil {
		return "", err
	}
	s = r.asNumber(x, s)
	b, err := r.total.bound(x)
	if err != nil {
		return "", err
	}
	if widen && b.isInt && !isLiteral(x) {
		s = r.widen(s)
	}
	if flush && !b.isInt {
		s = r.flush(s, pgFlush)
	}
	return s, nil
}

// widen casts an integer to the dialect's signed 64-bit integer.
func (r *renderer) widen(s string) string {
	switch r.dialect {
	case parser.MySQL:
		return "CAST(" + s + " AS SIGNED)"
	case parser.PostgreSQL:
		return "CAST(" + s + " AS BIGINT)"
	}
	return s // SQLite's integers are 64-bit already
}

// flush writes s as 0 when its magnitude is below tiny, on PostgreSQL only
// (the one backend that raises on underflow).
func (r *renderer) flush(s string, tiny float64) string {
	if r.dialect != parser.PostgreSQL {
		return s
	}
	t := number(tiny)
	return "(CASE WHEN " + s + " > -" + t + " AND " + s + " < " + t + " THEN 0 ELSE " + s + " END)"
}

func isLiteral(e parser.Expr) bool {
	_, ok := e.(*parser.Literal)
	return ok
}

// nullIfZero renders a divisor.
func nullIfZero(s string) string { return "NULLIF(" + s + ", 0)" }

// arithmetic renders + - * / % DIV and unary minus.
func (r *renderer) arithmetic(e parser.Expr) (string, error) {
	if _, err := r.needBound(e); err != nil {
		return "", err
	}
	if u, ok := e.(*parser.Unary); ok {
		x, err := r.operand(u.X, true, false)
		if err != nil {
			return "", err
		}
		return "(- " + x + ")", nil // a space: "--1" would start a comment
	}
	n := e.(*parser.Binary)
	if n.Op == parser.OpSub && r.dateColumn != nil && r.dateColumn(n.L) && r.dateColumn(n.R) {
		l, err := r.dateArg(n.L)
		if err != nil {
			return "", err
		}
		rr, err := r.dateArg(n.R)
		if err != nil {
			return "", err
		}
		return r.dateDiffSQL(l, rr), nil
	}
	widen := n.Op != parser.OpDiv
	flushL := n.Op == parser.OpMul || n.Op == parser.OpDiv
	flushR := n.Op == parser.OpMul
	l, err := r.operand(n.L, widen, flushL)
	if err != nil {
		return "", err
	}
	rr, err := r.operand(n.R, widen, flushR)
	if err != nil {
		return "", err
	}
	switch n.Op {
	case parser.OpDiv:
		if r.dialect == parser.MySQL {
			return "(" + l + " / " + nullIfZero(rr) + ")", nil
		}
		// Division is real division in every dialect, as in MySQL.
		return "(CAST(" + l + " AS DOUBLE PRECISION) / " + nullIfZero(rr) + ")", nil
	case parser.OpMod:
		return "(" + l + " % " + nullIfZero(rr) + ")", nil
	case parser.OpIntDiv:
		switch r.dialect {
		case parser.MySQL:
			return "(" + l + " DIV " + nullIfZero(rr) + ")", nil
		case parser.PostgreSQL:
			return "(CAST(" + l + " AS BIGINT) / " + nullIfZero("CAST("+rr+" AS BIGINT)") + ")", nil
		}
		return "(CAST(" + l + " AS INTEGER) / " + nullIfZero("CAST("+rr+" AS INTEGER)") + ")", nil
	}
	return "(" + l + " " + binaryOps[n.Op] + " " + rr + ")", nil
}

// totalCase renders a CASE: its operand and conditions are compared, its
// results flow on.
func (r *renderer) totalCase(e *parser.Case) (string, error) {
	var b strings.Builder
	b.WriteString("(CASE")
	if e.Operand != nil {
		s, err := r.sub(false, e.Operand)
		if err != nil {
			return "", err
		}
		b.WriteString(" " + s)
	}
	for _, w := range e.Whens {
		c, err := r.sub(false, w.Cond)
		if err != nil {
			return "", err
		}
		v, err := r.sub(r.numeric, w.Result)
		if err != nil {
			return "", err
		}
		b.WriteString(" WHEN " + c + " THEN " + v)
	}
	if e.Else != nil {
		s, err := r.sub(r.numeric, e.Else)
		if err != nil {
			return "", err
		}
		b.WriteString(" ELSE " + s)
	}
	b.WriteString(" END)")
	return b.String(), nil
}

// totalFunc renders an allowed function by its class.
func (r *renderer) totalFunc(f *parser.Func) (string, error) {
	if r.aggregates[f.Name] && f.Schema == "" && !f.Over {
		return r.node(f)
	}
	if unit, arg, ok := datePart(f); ok {
		return r.totalDatePart(f, unit, arg)
	}
	class, ok := scalarFuncs[f.Name]
	if !ok || f.Schema != "" || f.Over || f.Distinct || f.Star {
		return r.node(f) // refused there
	}
	switch class {
	case funcArith:
		return r.arithFunc(f)
	case funcValue:
		if f.Name == "if" && len(f.Args) == 3 {
			return r.totalCase(&parser.Case{Whens: []parser.When{{Cond: f.Args[0], Result: f.Args[1]}}, Else: f.Args[2]})
		}
		return r.with(r.numeric, f)
	}
	return r.stringFunc(f)
}

// arithFunc renders ABS ... POWER under the rules of the table above.
func (r *renderer) arithFunc(f *parser.Func) (string, error) {
	if _, err := r.needBound(f); err != nil {
		return "", err
	}
	if len(f.Args) == 0 {
		return "", unsupported("%s without arguments", strings.ToUpper(f.Name))
	}
	name := strings.ToUpper(r.funcName(f.Name))
	x, err := r.operand(f.Args[0], f.Name == "abs" || f.Name == "mod", false)
	if err != nil {
		return "", err
	}
	xb, _ := r.total.bound(f.Args[0])
	switch f.Name {
	case "mod":
		if len(f.Args) != 2 {
			return "", unsupported("MOD with %d arguments", len(f.Args))
		}
		y, err := r.operand(f.Args[1], true, false)
		if err != nil {
			return "", err
		}
		return "MOD(" + x + ", " + nullIfZero(y) + ")", nil
	case "round":
		if len(f.Args) == 2 {
			d, err := r.operand(f.Args[1], true, false)
			if err != nil {
				return "", err
			}
			return "ROUND(" + x + ", " + d + ")", nil
		}
	case "sqrt":
		return "(CASE WHEN " + x + " >= 0 THEN SQRT(" + x + ") END)", nil
	case "ln", "log":
		if len(f.Args) == 2 {
			// LOG(b, x): b is a constant (logBound), x the second argument.
			y, err := r.operand(f.Args[1], false, false)
			if err != nil {
				return "", err
			}
			return "(CASE WHEN " + y + " > 0 THEN LOG(" + x + ", " + y + ") END)", nil
		}
		return "(CASE WHEN " + x + " > 0 THEN " + name + "(" + x + ") END)", nil
	case "exp":
		if xb.lo < expUnderflow {
			return "(CASE WHEN " + x + " < " + strconv.Itoa(expUnderflow) + " THEN 0 ELSE EXP(" + x + ") END)", nil
		}
		return "EXP(" + x + ")", nil
	case "power", "pow":
		return r.power(f, x, xb)
	}
	if len(f.Args) != 1 {
		return "", unsupported("%s with %d arguments", strings.ToUpper(f.Name), len(f.Args))
	}
	return name + "(" + x + ")", nil
}

// power renders POWER(b, e) for a constant e (powerBound): on its domain
// only, with a PostgreSQL base flushed to 0 where its power would
// underflow.
func (r *renderer) power(f *parser.Func, base string, b interval) (string, error) {
	e, _ := r.total.constNumber(f.Args[1])
	exp, err := r.sub(true, f.Args[1])
	if err != nil {
		return "", err
	}
	name := strings.ToUpper(f.Name)
	if e > 0 && !b.isInt {
		base = r.flush(base, math.Pow(10, -300/e))
	}
	switch {
	case e < 0 && e == math.Trunc(e):
		return name + "(" + nullIfZero(base) + ", " + exp + ")", nil
	case e < 0:
		return "(CASE WHEN " + base + " > 0 THEN " + name + "(" + base + ", " + exp + ") END)", nil
	case e != math.Trunc(e):
		return "(CASE WHEN " + base + " >= 0 THEN " + name + "(" + base + ", " + exp + ") END)", nil
	}
	return name + "(" + base + ", " + exp + ")", nil
}

// stringFunc renders a string function: constant REPLACE arguments within
// the growth cap, numeric positions.
func (r *renderer) stringFunc(f *parser.Func) (string, error) {
	a := r.total
	switch f.Name {
	case "replace":
		if len(f.Args) != 3 {
			return "", unsupported("REPLACE with %d arguments", len(f.Args))
		}
		for _, x := range f.Args[1:] {
			if _, ok := a.constString(x); !ok {
				return "", refuse("%s: REPLACE in a differentially private query needs constant strings to find and to put, so that the size of its result is known", short(a.text(f)))
			}
		}
		if g := a.growth(f); g > maxGrowth {
			return "", refuse("%s can make a string %g times longer than its input (at most %d): the time it takes would depend on the rows it reads", short(a.text(f)), g, maxGrowth)
		}
	case "substring", "substr", "left", "right":
		for _, x := range f.Args[1:] {
			if a.kind(x) != kindNumber {
				return "", refuse("%s: the positions and lengths of %s must be numbers", short(a.text(f)), strings.ToUpper(f.Name))
			}
		}
		if (f.Name == "substring" || f.Name == "substr") && len(f.Args) == 3 && r.dialect == parser.PostgreSQL {
			return r.pgSubstring(f)
		}
	default:
		if g := a.growth(f); g > maxGrowth {
			return "", refuse("%s can make a string %g times longer than its input (at most %d): the time it takes would depend on the rows it reads", short(a.text(f)), g, maxGrowth)
		}
	}
	return r.with(false, f)
}

// pgSubstring renders SUBSTRING(x, p, n) for PostgreSQL, which raises
// "negative substring length not allowed": a negative n is 0 (an empty
// string, as MySQL gives).
func (r *renderer) pgSubstring(f *parser.Func) (string, error) {
	var args [3]string
	for i, x := range f.Args {
		s, err := r.sub(false, x)
		if err != nil {
			return "", err
		}
		args[i] = s
	}
	n := "(CASE WHEN " + args[2] + " < 0 THEN 0 ELSE " + args[2] + " END)"
	return "SUBSTRING(" + args[0] + ", " + args[1] + ", " + n + ")", nil
}

// Patterns of the text a PostgreSQL cast accepts without error: integers
// of at most 18 digits (below 2⁶³), and decimals of at most 100 digits on
// each side of the point with a two-digit exponent (so |x| < 1e200 and any
// non-zero |x| > 1e-200: no overflow, no underflow). Whitespace is the
// ASCII set int8in and float8in skip (isspace); \s would also match
// Unicode spaces, which they reject.
const (
	pgIntPattern   = `^[ \t\n\r\f\v]*[-+]?[0-9]{1,18}[ \t\n\r\f\v]*$`
	pgFloatPattern = `^[ \t\n\r\f\v]*[-+]?([0-9]{1,100}(\.[0-9]{0,100})?|\.[0-9]{1,100})([eE][-+]?[0-9]{1,2})?[ \t\n\r\f\v]*$`
)

// totalCast renders CAST(x AS type). A bounded number is clamped (so an
// integer cast cannot overflow); on PostgreSQL an unbounded number is cast
// only within the target's range, text only when it matches a pattern the
// cast accepts, and a cast of anything but a date or a constant to DATE is
// refused.
func (r *renderer) totalCast(c *parser.Cast) (string, error) {
	a := r.total
	t, err := r.castType(c.Type)
	if err != nil {
		return "", err
	}
	if c.Type != "int" && c.Type != "float" && c.Type != "decimal" {
		x, err := r.sub(false, c.X)
		if err != nil {
			return "", err
		}
		if c.Type == "date" && r.dialect == parser.PostgreSQL && a.kind(c.X) != kindDate && !isLiteral(c.X) {
			return "", refuse("%s: a cast to DATE of a value that is not a date fails on PostgreSQL for some texts, which would reveal them; compare the text instead", short(a.text(c)))
		}
		return "CAST(" + x + " AS " + t + ")", nil
	}
	if b, err := a.bound(c.X); err == nil {
		x, err := r.operand(c.X, false, r.dialect == parser.PostgreSQL && c.Type != "int")
		if err != nil {
			return "", err
		}
		_ = b
		return "CAST(" + x + " AS " + t + ")", nil
	}
	x, err := r.sub(false, c.X)
	if err != nil {
		return "", err
	}
	cast := func(s string) string { return "CAST(" + s + " AS " + t + ")" }
	if r.dialect != parser.PostgreSQL {
		return cast(x), nil
	}
	switch a.kind(c.X) {
	case kindNumber:
		limit := "9e18"
		if c.Type != "int" {
			limit = "(1e300)"
			x = r.flush(x, pgFlush)
		}
		return "(CASE WHEN " + x + " >= -" + limit + " AND " + x + " <= " + limit + " THEN " + cast(x) + " END)", nil
	case kindBool:
		return cast(x), nil // a type error, whatever the rows
	case kindString:
	default:
		x = "CAST(" + x + " AS TEXT)"
	}
	pattern := pgIntPattern
	if c.Type != "int" {
		pattern = pgFloatPattern
	}
	return "(CASE WHEN " + x + " ~ " + r.stringLiteral(pattern) + " THEN " + cast(x) + " END)", nil
}

// totalLike renders LIKE with a constant pattern and escape.
func (r *renderer) totalLike(l *parser.Like) (string, error) {
	a := r.total
	p, ok := a.constString(l.Pattern)
	if !ok {
		return "", refuse("%s: LIKE in a differentially private query needs a constant pattern, so that the work it does per row is known", short(a.text(l)))
	}
	escape := '\\'
	if l.Escape != nil {
		e, ok := a.constString(l.Escape)
		if !ok || utf8.RuneCountInString(e) != 1 {
			return "", refuse("%s: the ESCAPE of LIKE must be one constant character", short(a.text(l)))
		}
		escape, _ = utf8.DecodeRuneInString(e)
	}
	if len(p) > maxLikePattern {
		return "", refuse("%s: a LIKE pattern may have at most %d bytes", short(a.text(l)), maxLikePattern)
	}
	wildcards, escaped := 0, false
	for _, c := range p {
		switch {
		case escaped:
			escaped = false
		case c == escape:
			escaped = true
		case c == '%':
			wildcards++
		}
	}
	if escaped {
		// PostgreSQL raises "LIKE pattern must not end with escape
		// character" when a row reaches it.
		return "", refuse("%s: a LIKE pattern must not end with its escape character", short(a.text(l)))
	}
	if wildcards > maxLikeWildcards {
		return "", refuse("%s: a LIKE pattern may have at most %d %% wildcards (the work per row grows as a power of their number)", short(a.text(l)), maxLikeWildcards)
	}
	return r.with(false, l)
}

// totalDatePart renders YEAR, MONTH or DAY of a date. On PostgreSQL the
// date must be finite: the year of 'infinity' is Infinity, which the cast
// to an integer raises on (MONTH and DAY of it are NULL). Used in
// arithmetic, a year is clamped to the years of the column's bounds, so
// that its bound holds (MySQL's years reach 9999, PostgreSQL's 5874897);
// elsewhere it keeps its value, as a comparison of a column does.
func (r *renderer) totalDatePart(f *parser.Func, unit string, arg parser.Expr) (string, error) {
	s, err := r.sub(false, arg)
	if err != nil {
		return "", err
	}
	if r.dialect == parser.PostgreSQL && r.total.kind(arg) == kindDate {
		s = "(CASE WHEN isfinite(" + s + ") THEN " + s + " END)"
	}
	out := r.datePartSQL(unit, s)
	if r.numeric && unit == "year" {
		if b, err := r.total.bound(f); err == nil {
			out = r.clamp(out, b.lo, b.hi)
		}
	}
	return out, nil
}

// dateArg renders an operand of a date difference: a date column clamped
// to its policy bounds, so that the difference's bound holds and no
// infinite or zero date reaches it (PostgreSQL raises "cannot subtract
// infinite dates"; the difference needs bounded columns, dateDiffBound).
func (r *renderer) dateArg(x parser.Expr) (string, error) {
	s, err := r.sub(false, x)
	if err != nil {
		return "", err
	}
	col, ok := r.total.dateColumn(x)
	switch {
	case !ok:
		return s, nil
	case col.Bounded():
		lo, hi := r.dateLiteral(*col.Lower), r.dateLiteral(*col.Upper)
		return "(CASE WHEN " + s + " < " + lo + " THEN " + lo + " WHEN " + s + " > " + hi + " THEN " + hi + " ELSE " + s + " END)", nil
	case r.dialect == parser.PostgreSQL:
		return "(CASE WHEN isfinite(" + s + ") THEN " + s + " END)", nil
	}
	return s, nil
}

// dateLiteral renders a policy date (days since 1970-01-01).
func (r *renderer) dateLiteral(days float64) string {
	d := policy.DaysDate(int64(days))
	if r.dialect == parser.SQLite {
		return "'" + d + "'"
	}
	return "DATE '" + d + "'"
}

// constString is the value of a constant string: a literal or a parameter.
func (a *analysis) constString(e parser.Expr) (string, bool) {
	switch n := e.(type) {
	case *parser.Literal:
		s, ok := n.Value.(string)
		return s, ok
	case *parser.Param:
		if n.Index < len(a.in.Params) {
			switch v := a.in.Params[n.Index].(type) {
			case string:
				return v, true
			case []byte:
				return string(v), true
			}
		}
	}
	return "", false
}

// growth is the most by which e's string output can exceed the total
// length of the strings it reads: REPLACE multiplies its subject's growth
// by max(1, |to|/|from|) (each match of from, |from| bytes, becomes |to|
// bytes; an empty from replaces nothing in any backend), a case mapping by
// caseGrowth; everything else passes the largest growth of its arguments.
func (a *analysis) growth(e parser.Expr) float64 {
	if g, ok := a.growths[e]; ok {
		return g
	}
	g := 1.0
	children := func(xs ...parser.Expr) {
		for _, x := range xs {
			if x != nil {
				g = math.Max(g, a.growth(x))
			}
		}
	}
	switch n := e.(type) {
	case *parser.Func:
		children(n.Args...)
		switch n.Name {
		case "replace":
			if len(n.Args) == 3 {
				from, _ := a.constString(n.Args[1])
				to, _ := a.constString(n.Args[2])
				if from != "" {
					g *= math.Max(1, float64(len(to))/float64(len(from)))
				}
			}
		case "lower", "upper", "lcase", "ucase":
			g *= caseGrowth
		}
	case *parser.Case:
		for _, w := range n.Whens {
			children(w.Result)
		}
		children(n.Else)
	case *parser.Binary:
		if n.Op == parser.OpConcat {
			children(n.L, n.R)
		}
	case *parser.Cast:
		children(n.X)
	}
	if a.growths == nil {
		a.growths = map[parser.Expr]float64{}
	}
	a.growths[e] = g
	return g
}

// valueKind is what an expression's values are, as far as the policy and
// the expression's form tell.
type valueKind int

const (
	kindUnknown valueKind = iota
	kindNumber
	kindString
	kindDate
	kindBool
)

// kind infers the kind of e's values.
func (a *analysis) kind(e parser.Expr) valueKind {
	switch n := e.(type) {
	case *parser.Literal:
		switch n.Value.(type) {
		case int64, float64, nil:
			return kindNumber
		case string:
			return kindString
		case bool:
			return kindBool
		}
	case *parser.Param:
		if n.Index < len(a.in.Params) {
			switch a.in.Params[n.Index].(type) {
			case int64, float64, int, uint64:
				return kindNumber
			case string, []byte:
				return kindString
			}
		}
	case *parser.ColumnRef:
		name, err := a.column(n)
		if err != nil {
			return kindUnknown
		}
		col, _ := a.table.Column(name)
		if col == nil {
			return kindUnknown
		}
		switch col.Type {
		case policy.TypeInt, policy.TypeFloat:
			return kindNumber
		case policy.TypeString:
			return kindString
		case policy.TypeDate:
			return kindDate
		case policy.TypeBool:
			return kindBool
		}
	case *parser.Unary:
		if n.Op == parser.OpNeg {
			return kindNumber
		}
		return kindBool
	case *parser.Binary:
		switch n.Op {
		case parser.OpAdd, parser.OpSub, parser.OpMul, parser.OpDiv, parser.OpMod, parser.OpIntDiv:
			return kindNumber
		case parser.OpConcat:
			return kindString
		}
		return kindBool
	case *parser.Between, *parser.In, *parser.IsNull, *parser.IsBool, *parser.Like:
		return kindBool
	case *parser.Cast:
		switch n.Type {
		case "int", "float", "decimal":
			return kindNumber
		case "string":
			return kindString
		case "date":
			return kindDate
		}
	case *parser.Func:
		if _, _, ok := datePart(n); ok {
			return kindNumber
		}
		switch scalarFuncs[n.Name] {
		case funcArith:
			return kindNumber
		case funcString:
			if n.Name == "length" || n.Name == "char_length" {
				return kindNumber
			}
			return kindString
		case funcValue:
			switch {
			case n.Name == "if" && len(n.Args) == 3:
				return a.commonKind(n.Args[1:]...)
			case n.Name == "nullif" && len(n.Args) > 0:
				return a.kind(n.Args[0])
			}
			return a.commonKind(n.Args...)
		}
	case *parser.Case:
		var xs []parser.Expr
		for _, w := range n.Whens {
			xs = append(xs, w.Result)
		}
		if n.Else != nil {
			xs = append(xs, n.Else)
		}
		return a.commonKind(xs...)
	}
	return kindUnknown
}

// commonKind is the kind all of xs share (NULL literals aside), else
// kindUnknown.
func (a *analysis) commonKind(xs ...parser.Expr) valueKind {
	out := kindUnknown
	for _, x := range xs {
		if lit, ok := x.(*parser.Literal); ok && lit.Value == nil {
			continue
		}
		k := a.kind(x)
		if out != kindUnknown && k != out {
			return kindUnknown
		}
		out = k
	}
	return out
}

// short cuts an expression's text for a message.
func short(s string) string {
	const limit = 200
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
