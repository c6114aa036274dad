package eval

import (
	"fmt"
	"strings"

	"github.com/dpproxy/dpproxy/parser"
)

// Resolver says which names and calls an Env will answer, without values.
type Resolver interface {
	// ResolvesCall reports whether the Env answers f itself (an aggregate
	// whose value is computed elsewhere); its arguments are then not checked.
	ResolvesCall(f *parser.Func) bool
	// ResolvesColumn reports whether the Env knows the column.
	ResolvesColumn(ref *parser.ColumnRef) bool
}

// Check reports, without evaluating anything, every reason Eval would refuse
// e whatever the values it meets: an unknown function, a wrong argument
// count, a construct Eval does not evaluate, a column or variable the Env
// cannot name. The engine calls it on a DP answer's select list, HAVING and
// ORDER BY before it charges, so that a refusal found there is free: with
// lazy CASE and IF, a refusal met only while evaluating would depend on the
// noisy values, and be found after the charge.
func Check(e parser.Expr, r Resolver) error {
	var err error
	walkExpr(e, func(n parser.Expr) bool {
		if err != nil {
			return false
		}
		err = checkNode(n, r)
		if f, ok := n.(*parser.Func); ok && err == nil && r.ResolvesCall(f) {
			return false
		}
		return err == nil
	})
	return err
}

func checkNode(n parser.Expr, r Resolver) error {
	switch x := n.(type) {
	case *parser.ColumnRef:
		if !r.ResolvesColumn(x) {
			return fmt.Errorf("unknown column '%s'", x.Name)
		}
	case *parser.Variable:
		return unsupported("variables here")
	case *parser.Func:
		if r.ResolvesCall(x) {
			return nil
		}
		name := strings.ToUpper(x.Name)
		switch {
		case x.Over:
			return unsupported("window function %s() OVER", name)
		case IsAggregate(x.Name):
			return unsupported("aggregate %s() here", name)
		case x.Star || x.Distinct:
			return fmt.Errorf("eval: %s() takes no * or DISTINCT", name)
		}
		switch x.Name {
		case "if":
			return arity(x, 3, 3)
		case "ifnull", "nvl":
			return arity(x, 2, 2)
		case "coalesce":
			return arity(x, 1, -1)
		}
		b, ok := builtins[x.Name]
		if !ok {
			return unsupported("function %s", name)
		}
		return arity(x, b.min, b.max)
	case *parser.Cast:
		if _, err := castTo(int64(0), x.Type); err != nil {
			return err
		}
	case *parser.In:
		if x.Sub != nil {
			return unsupported("subqueries")
		}
	case *parser.Literal, *parser.Param, *parser.Unary, *parser.Binary, *parser.Case,
		*parser.Between, *parser.IsNull, *parser.IsBool, *parser.Like:
	default:
		return unsupported("expression %T", n)
	}
	return nil
}

// walkExpr visits e and, while visit returns true, its sub-expressions.
func walkExpr(e parser.Expr, visit func(parser.Expr) bool) {
	if e == nil || !visit(e) {
		return
	}
	switch x := e.(type) {
	case *parser.Unary:
		walkExpr(x.X, visit)
	case *parser.Binary:
		walkExpr(x.L, visit)
		walkExpr(x.R, visit)
	case *parser.Func:
		for _, a := range x.Args {
			walkExpr(a, visit)
		}
	case *parser.Case:
		walkExpr(x.Operand, visit)
		for _, w := range x.Whens {
			walkExpr(w.Cond, visit)
			walkExpr(w.Result, visit)
		}
		walkExpr(x.Else, visit)
	case *parser.Between:
		walkExpr(x.X, visit)
		walkExpr(x.Lo, visit)
		walkExpr(x.Hi, visit)
	case *parser.In:
		walkExpr(x.X, visit)
		for _, it := range x.List {
			walkExpr(it, visit)
		}
	case *parser.IsNull:
		walkExpr(x.X, visit)
	case *parser.IsBool:
		walkExpr(x.X, visit)
	case *parser.Like:
		walkExpr(x.X, visit)
		walkExpr(x.Pattern, visit)
		walkExpr(x.Escape, visit)
	case *parser.Cast:
		walkExpr(x.X, visit)
	}
}
