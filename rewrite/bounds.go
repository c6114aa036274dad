package rewrite

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
)

// interval is a public bound on a row-level expression: every value it can
// take lies in [lo, hi]. isInt is set when every value is an integer.
type interval struct {
	lo, hi float64
	isInt  bool
}

func point(v float64) interval { return interval{v, v, v == math.Trunc(v)} }

func hull(a, b interval) interval {
	return interval{math.Min(a.lo, b.lo), math.Max(a.hi, b.hi), a.isInt && b.isInt}
}

// boolInterval is the bound of a predicate used as a number (MySQL's TRUE is 1).
var boolInterval = interval{0, 1, true}

// maxBound keeps derived bounds finite: beyond it a bound is useless for
// noise anyway, and infinities would poison the sensitivity.
const maxBound = 1e15

// noBoundError names the sub-expression that has no public bound.
type noBoundError struct{ expr string }

func (e *noBoundError) Error() string { return e.expr }

// boundMemo is a remembered result of bound.
type boundMemo struct {
	b   interval
	err error
}

// bound derives a public interval for a row-level expression by interval
// arithmetic (Moore 1966) from the policy's column bounds. The backend SQL
// clamps the expression to this interval as well, so the sensitivity holds
// even where SQL arithmetic differs from real arithmetic (integer division,
// overflow): the interval only needs to be tight, the clamp makes it true.
// Inside a DP statement the renderer also clamps every column that is an
// operand of arithmetic (total.go), so each arithmetic node's interval
// holds in the backend and no node can overflow.
//
// Results are remembered per node: the renderer asks for the bound of every
// arithmetic node, which would otherwise cost quadratic time in the depth.
func (a *analysis) bound(e parser.Expr) (interval, error) {
	if m, ok := a.bounds[e]; ok {
		return m.b, m.err
	}
	b, err := a.boundNode(e)
	if a.bounds == nil {
		a.bounds = map[parser.Expr]boundMemo{}
	}
	a.bounds[e] = boundMemo{b, err}
	return b, err
}

func (a *analysis) boundNode(e parser.Expr) (interval, error) {
	switch n := e.(type) {
	case *parser.Literal:
		switch v := n.Value.(type) {
		case int64:
			return point(float64(v)), nil
		case float64:
			return point(v), nil
		case bool:
			if v {
				return point(1), nil
			}
			return point(0), nil
		case nil:
			return point(0), nil // NULL is skipped by aggregates; any point will do
		}
	case *parser.Param:
		if n.Index < len(a.in.Params) {
			switch v := a.in.Params[n.Index].(type) {
			case int64:
				return point(float64(v)), nil
			case float64:
				return point(v), nil
			}
		}
	case *parser.ColumnRef:
		name, err := a.column(n)
		if err != nil {
			return interval{}, err
		}
		col, _ := a.table.Column(name)
		if col != nil && col.Type == policy.TypeDate {
			return interval{}, dateMisuse(name)
		}
		if col.Bounded() {
			lo, hi := *col.Lower, *col.Upper
			isInt := col.Type == policy.TypeInt
			if isInt {
				lo, hi = math.Ceil(lo), math.Floor(hi)
			}
			return interval{lo, hi, isInt}, nil
		}
		if col != nil && col.Type == policy.TypeBool {
			return boolInterval, nil
		}
		return interval{}, &noBoundError{name}
	case *parser.Unary:
		if n.Op == parser.OpNot {
			return boolInterval, nil
		}
		x, err := a.bound(n.X)
		if err != nil {
			return interval{}, err
		}
		if n.Op == parser.OpNeg {
			return interval{-x.hi, -x.lo, x.isInt}, nil
		}
	case *parser.Binary:
		switch n.Op {
		case parser.OpEQ, parser.OpNE, parser.OpLT, parser.OpLE, parser.OpGT, parser.OpGE,
			parser.OpNullEQ, parser.OpAnd, parser.OpOr, parser.OpXor:
			return boolInterval, nil
		}
		if n.Op == parser.OpSub {
			if b, isDate, err := a.dateDiffBound(n.L, n.R); isDate {
				return b, err
			}
		}
		l, err := a.bound(n.L)
		if err != nil {
			return interval{}, err
		}
		r, err := a.bound(n.R)
		if err != nil {
			return interval{}, err
		}
		switch n.Op {
		case parser.OpAdd:
			return finite(interval{l.lo + r.lo, l.hi + r.hi, l.isInt && r.isInt}, e)
		case parser.OpSub:
			return finite(interval{l.lo - r.hi, l.hi - r.lo, l.isInt && r.isInt}, e)
		case parser.OpMul:
			return finite(span(l, r, func(x, y float64) float64 { return x * y }, l.isInt && r.isInt), e)
		case parser.OpDiv:
			q, err := quotient(l, r, e)
			if err != nil {
				return interval{}, err
			}
			return finite(q, e)
		case parser.OpIntDiv:
			return intQuotient(l, r, e)
		case parser.OpMod:
			return finite(remainder(l, r), e)
		}
	case *parser.Between, *parser.In, *parser.IsNull, *parser.IsBool, *parser.Like:
		return boolInterval, nil
	case *parser.Case:
		var out *interval
		add := func(x parser.Expr) error {
			b, err := a.bound(x)
			if err != nil {
				return err
			}
			if out == nil {
				out = &b
			} else {
				h := hull(*out, b)
				out = &h
			}
			return nil
		}
		for _, w := range n.Whens {
			if err := add(w.Result); err != nil {
				return interval{}, err
			}
		}
		if n.Else != nil {
			if err := add(n.Else); err != nil {
				return interval{}, err
			}
		}
		if out != nil {
			return *out, nil
		}
	case *parser.Func:
		return a.funcBound(n)
	case *parser.Cast:
		x, err := a.bound(n.X)
		if err != nil {
			return interval{}, err
		}
		switch n.Type {
		case "int":
			return interval{math.Round(x.lo), math.Round(x.hi), true}, nil
		case "float", "decimal":
			return x, nil
		}
	}
	return interval{}, &noBoundError{exprText(e)}
}

func (a *analysis) funcBound(f *parser.Func) (interval, error) {
	if unit, arg, ok := datePart(f); ok {
		return a.datePartBound(f, unit, arg)
	}
	args := make([]interval, len(f.Args))
	for i, x := range f.Args {
		b, err := a.bound(x)
		if err != nil {
			return interval{}, err
		}
		args[i] = b
	}
	if len(args) == 0 {
		return interval{}, &noBoundError{exprText(f)}
	}
	x := args[0]
	switch f.Name {
	case "floor":
		return interval{math.Floor(x.lo), math.Floor(x.hi), true}, nil
	case "ceil", "ceiling":
		return interval{math.Ceil(x.lo), math.Ceil(x.hi), true}, nil
	case "round":
		if len(args) == 1 {
			return interval{math.Round(x.lo), math.Round(x.hi), true}, nil
		}
		// ROUND(x, d) moves x by at most half a unit of the last digit
		// kept: 0.5 for d >= 0, 0.5·10^-d for d < 0.
		move := 0.5 * math.Pow(10, math.Max(0, -args[1].lo))
		return finite(interval{x.lo - move, x.hi + move, false}, f)
	case "abs":
		if x.lo >= 0 {
			return x, nil
		}
		if x.hi <= 0 {
			return interval{-x.hi, -x.lo, x.isInt}, nil
		}
		return interval{0, math.Max(-x.lo, x.hi), x.isInt}, nil
	case "sign":
		return interval{-1, 1, true}, nil
	case "mod":
		if len(args) == 2 {
			return finite(remainder(x, args[1]), f)
		}
	case "sqrt":
		return finite(interval{math.Sqrt(math.Max(x.lo, 0)), math.Sqrt(math.Max(x.hi, 0)), false}, f)
	case "exp":
		return expBound(x, f)
	case "ln", "log":
		return logBound(f, args)
	case "power", "pow":
		if len(args) == 2 {
			return a.powerBound(f, x)
		}
	case "least", "greatest":
		out := x
		for _, b := range args[1:] {
			if f.Name == "least" {
				out = interval{math.Min(out.lo, b.lo), math.Min(out.hi, b.hi), out.isInt && b.isInt}
			} else {
				out = interval{math.Max(out.lo, b.lo), math.Max(out.hi, b.hi), out.isInt && b.isInt}
			}
		}
		return out, nil
	case "if":
		if len(args) == 3 {
			return hull(args[1], args[2]), nil
		}
	case "coalesce", "ifnull":
		out := x
		for _, b := range args[1:] {
			out = hull(out, b)
		}
		return out, nil
	}
	return interval{}, &noBoundError{exprText(f)}
}

// span is the interval of op over the corners of two intervals, which bounds
// a monotone-in-each-argument operation such as * and /.
func span(l, r interval, op func(x, y float64) float64, isInt bool) interval {
	c := []float64{op(l.lo, r.lo), op(l.lo, r.hi), op(l.hi, r.lo), op(l.hi, r.hi)}
	out := interval{c[0], c[0], isInt}
	for _, v := range c[1:] {
		out.lo, out.hi = math.Min(out.lo, v), math.Max(out.hi, v)
	}
	return out
}

func finite(b interval, e parser.Expr) (interval, error) {
	if math.IsNaN(b.lo) || math.IsNaN(b.hi) || math.Abs(b.lo) > maxBound || math.Abs(b.hi) > maxBound {
		return interval{}, &noBoundError{exprText(e) + " (its bound is too large)"}
	}
	return b, nil
}

// exprText renders an expression for messages and as a canonical form
// (MySQL quoting, plain string literals).
func exprText(e parser.Expr) string {
	return (&analysis{}).text(e)
}

// text is the canonical SQL text of e in this query: its columns are named
// as resolved against the source, so age and adult.age are one column and
// p.age and v.age in a join are two. Equal texts share a backend column.
func (a *analysis) text(e parser.Expr) string {
	r := &renderer{dialect: parser.MySQL, display: true}
	if a.table != nil {
		r.column = func(ref *parser.ColumnRef) (string, error) {
			name, err := a.column(ref)
			if err != nil {
				return r.ident(ref.Name), nil
			}
			return a.nameSQL(r, name), nil
		}
	}
	s, err := r.expr(e)
	if err != nil {
		return fmt.Sprintf("%T", e)
	}
	return s
}

// quotient bounds l / r. A divisor whose interval excludes 0 gives the span
// of the corners (Moore 1966, division by an interval without 0). An
// integer divisor that can be 0 is rendered as NULLIF(r, 0) (total.go), so
// every divisor that reaches the division is an integer with |r| >= 1: the
// quotient is the hull of l divided by the parts of r's interval at or
// beyond ±1, |l / r| <= max|l|. Any other divisor that can be 0 has no bound.
func quotient(l, r interval, e parser.Expr) (interval, error) {
	div := func(x, y float64) float64 { return x / y }
	if r.lo > 0 || r.hi < 0 {
		return span(l, r, div, false), nil
	}
	if !r.isInt {
		return interval{}, &noBoundError{exprText(e) + " (the divisor can be 0 or close to it)"}
	}
	var parts []interval
	if r.hi >= 1 {
		parts = append(parts, span(l, interval{math.Max(1, r.lo), r.hi, true}, div, false))
	}
	if r.lo <= -1 {
		parts = append(parts, span(l, interval{r.lo, math.Min(-1, r.hi), true}, div, false))
	}
	if len(parts) == 0 {
		return point(0), nil // the divisor is always 0: the quotient is always NULL
	}
	out := parts[0]
	for _, p := range parts[1:] {
		out = hull(out, p)
	}
	return out, nil
}

// intQuotient bounds l DIV r. MySQL truncates the real quotient; PostgreSQL
// and SQLite divide the operands cast to integers (render.go), so a
// non-zero divisor reaching the division is at least 1 in magnitude and
// |q| <= max|l| + 1 (the cast may round l up by half).
func intQuotient(l, r interval, e parser.Expr) (interval, error) {
	m := math.Max(math.Abs(l.lo), math.Abs(l.hi)) + 1
	out := interval{-m, m, true}
	if r.lo > 0 || r.hi < 0 {
		q := span(l, r, func(x, y float64) float64 { return x / y }, true)
		out = hull(out, interval{math.Floor(q.lo), math.Ceil(q.hi), true})
	} else if !r.isInt {
		return interval{}, &noBoundError{exprText(e) + " (the divisor can be 0 or close to it)"}
	}
	return finite(out, e)
}

// remainder bounds l % r (MOD): in all three dialects the result has the
// sign of l and is smaller in magnitude than both |l| and |r| (SQLite casts
// both operands to integers first, which only shrinks them).
func remainder(l, r interval) interval {
	m := math.Min(math.Max(math.Abs(l.lo), math.Abs(l.hi)), math.Max(math.Abs(r.lo), math.Abs(r.hi)))
	out := interval{0, 0, l.isInt && r.isInt}
	if l.lo < 0 {
		out.lo = -m
	}
	if l.hi > 0 {
		out.hi = m
	}
	return out
}

// expUnderflow is the argument below which EXP is rendered as 0: PostgreSQL
// raises "value out of range: underflow" when exp's result rounds to 0
// (float.c, dexp), and exp(-700) ≈ 1e-304 is still a normal double.
const expUnderflow = -700

// expBound bounds EXP(x): defined only while the result stays within
// maxBound, so that no backend's double overflows.
func expBound(x interval, f parser.Expr) (interval, error) {
	if x.hi > math.Log(maxBound) {
		return interval{}, &noBoundError{exprText(f) + " (its bound is too large)"}
	}
	lo := 0.0
	if x.lo >= expUnderflow {
		lo = math.Exp(x.lo)
	}
	return interval{lo, math.Exp(x.hi), false}, nil
}

// minLn is below the natural logarithm of every positive number a backend
// can hold: PostgreSQL's numeric goes down to 1e-16383 (ln ≈ -37723.1),
// doubles to 4.9e-324 (ln ≈ -744.4).
const minLn = -37724

// logBound bounds LN(x), LOG(x) and LOG(b, x), rendered only for x > 0
// (total.go). LOG(x) is natural in MySQL and decimal in PostgreSQL and
// SQLite: the bound covers both. LOG(b, x) needs a constant base b > 0,
// b != 1 (PostgreSQL raises "division by zero" for b = 1).
func logBound(f *parser.Func, args []interval) (interval, error) {
	x := args[len(args)-1]
	if x.hi <= 0 {
		return point(0), nil // always NULL
	}
	lo := float64(minLn)
	switch {
	case x.lo > 0:
		lo = math.Log(x.lo)
	case x.isInt:
		lo = 0 // a positive integer is at least 1
	}
	ln := interval{lo, math.Log(x.hi), false}
	if len(args) == 2 {
		b := args[0]
		if b.lo != b.hi || b.lo <= 0 || b.lo == 1 {
			return interval{}, &noBoundError{exprText(f) + " (LOG needs a constant base above 0 other than 1)"}
		}
		return finite(span(ln, point(math.Log(b.lo)), func(x, y float64) float64 { return x / y }, false), f)
	}
	if f.Name == "log" {
		ln = hull(ln, interval{ln.lo / math.Ln10, ln.hi / math.Ln10, false})
	}
	return finite(ln, f)
}

// minPower is the smallest magnitude a non-zero POWER result may have:
// PostgreSQL raises "value out of range: underflow" when pow rounds a
// non-zero base's power to 0.
const minPower = 1e-300

// powerBound bounds POWER(b, e) for a constant exponent e. Bases outside
// the domain are NULL (total.go renders the guards): b = 0 for e < 0, b < 0
// for a non-integer e.
func (a *analysis) powerBound(f *parser.Func, b interval) (interval, error) {
	e, ok := a.constNumber(f.Args[1])
	if !ok {
		return interval{}, &noBoundError{exprText(f) + " (POWER needs a constant exponent)"}
	}
	pow := func(x, _ float64) float64 { return math.Pow(x, e) }
	isIntExp := e == math.Trunc(e)
	if e == 0 {
		return point(1), nil
	}
	if !isIntExp {
		if b.hi < 0 {
			return point(0), nil // always NULL
		}
		b.lo = math.Max(b.lo, 0)
	}
	maxAbs := math.Max(math.Abs(b.lo), math.Abs(b.hi))
	if e < 0 && maxAbs > 0 && math.Pow(maxAbs, e) < minPower {
		return interval{}, &noBoundError{exprText(f) + " (its result can underflow)"}
	}
	var parts []interval
	switch {
	case e > 0:
		parts = append(parts, span(b, b, pow, b.isInt && isIntExp))
		if b.lo < 0 && b.hi > 0 {
			parts = append(parts, point(0))
		}
	case b.lo > 0 || b.hi < 0:
		parts = append(parts, span(b, b, pow, false))
	case b.isInt:
		// NULLIF(b, 0): the base is at least 1 in magnitude.
		if b.hi >= 1 {
			p := interval{math.Max(1, b.lo), b.hi, true}
			parts = append(parts, span(p, p, pow, false))
		}
		if b.lo <= -1 && isIntExp {
			p := interval{b.lo, math.Min(-1, b.hi), true}
			parts = append(parts, span(p, p, pow, false))
		}
	default:
		return interval{}, &noBoundError{exprText(f) + " (the base can be 0)"}
	}
	if len(parts) == 0 {
		return point(0), nil
	}
	out := parts[0]
	for _, p := range parts[1:] {
		out = hull(out, p)
	}
	return finite(out, f)
}

// constNumber is the value of a numeric constant: a literal, a parameter,
// or either negated.
func (a *analysis) constNumber(e parser.Expr) (float64, bool) {
	switch n := e.(type) {
	case *parser.Literal:
		switch v := n.Value.(type) {
		case int64:
			return float64(v), true
		case float64:
			return v, true
		}
	case *parser.Param:
		if n.Index < len(a.in.Params) {
			switch v := a.in.Params[n.Index].(type) {
			case int64:
				return float64(v), true
			case float64:
				return v, true
			}
		}
	case *parser.Unary:
		if n.Op == parser.OpNeg {
			v, ok := a.constNumber(n.X)
			return -v, ok
		}
	}
	return 0, false
}
