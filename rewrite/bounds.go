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

// bound derives a public interval for a row-level expression by interval
// arithmetic (Moore 1966) from the policy's column bounds. The backend SQL
// clamps the expression to this interval as well, so the sensitivity holds
// even where SQL arithmetic differs from real arithmetic (integer division,
// overflow): the interval only needs to be tight, the clamp makes it true.
func (a *analysis) bound(e parser.Expr) (interval, error) {
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
			if r.lo <= 0 && r.hi >= 0 {
				return interval{}, &noBoundError{exprText(e) + " (the divisor can be 0)"}
			}
			return finite(span(l, r, func(x, y float64) float64 { return x / y }, false), e)
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
		// ROUND(x, d) moves x by at most half a unit of the last digit kept.
		return interval{x.lo - 0.5, x.hi + 0.5, false}, nil
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
