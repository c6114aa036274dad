package rewrite

import (
	"github.com/dpproxy/dpproxy/eval"
	"github.com/dpproxy/dpproxy/parser"
)

// exprKey returns the index of the expression key e equals, or -1.
func (a *analysis) exprKey(e parser.Expr) int {
	if _, isRef := e.(*parser.ColumnRef); isRef {
		return -1
	}
	text := ""
	for i, k := range a.plan.Keys {
		if k.Column != nil || k.Name == "" || k.Expr == nil {
			continue
		}
		if _, isRef := k.Expr.(*parser.ColumnRef); isRef {
			continue
		}
		if text == "" {
			text = exprText(e)
		}
		if text == k.Text {
			return i
		}
	}
	return -1
}

// hasExprKeys reports whether any GROUP BY key is an expression.
func (a *analysis) hasExprKeys() bool {
	for _, k := range a.plan.Keys {
		if _, isRef := k.Expr.(*parser.ColumnRef); !isRef {
			return true
		}
	}
	return false
}

// substituteKeys returns e with every occurrence of an expression key
// replaced by a reference to the key's name, so that the proxy evaluates
// the select list, HAVING and ORDER BY on the released key values. Nodes on
// the path to a replacement are copied; parsed statements are shared and
// never modified. Aggregate calls keep their identity (Plan.AggregateOf).
func (a *analysis) substituteKeys(e parser.Expr) parser.Expr {
	if e == nil || !a.hasExprKeys() {
		return e
	}
	return mapExpr(e, func(n parser.Expr) (parser.Expr, bool) {
		if f, ok := n.(*parser.Func); ok && eval.IsAggregate(f.Name) {
			return n, true // keep aggregates (and their pointers) as they are
		}
		if i := a.exprKey(n); i >= 0 {
			return &parser.ColumnRef{Name: a.plan.Keys[i].Name}, true
		}
		return nil, false
	})
}

// mapExpr rebuilds e bottom-up: f may replace a node (done=true) or leave it
// to be rebuilt from its mapped children. Unchanged subtrees are shared.
func mapExpr(e parser.Expr, f func(parser.Expr) (parser.Expr, bool)) parser.Expr {
	if e == nil {
		return nil
	}
	if r, done := f(e); done {
		return r
	}
	m := func(x parser.Expr) parser.Expr { return mapExpr(x, f) }
	switch n := e.(type) {
	case *parser.Unary:
		c := *n
		c.X = m(n.X)
		return &c
	case *parser.Binary:
		c := *n
		c.L, c.R = m(n.L), m(n.R)
		return &c
	case *parser.Func:
		c := *n
		c.Args = make([]parser.Expr, len(n.Args))
		for i, x := range n.Args {
			c.Args[i] = m(x)
		}
		return &c
	case *parser.Case:
		c := *n
		c.Operand, c.Else = m(n.Operand), m(n.Else)
		c.Whens = make([]parser.When, len(n.Whens))
		for i, w := range n.Whens {
			c.Whens[i] = parser.When{Cond: m(w.Cond), Result: m(w.Result)}
		}
		return &c
	case *parser.Between:
		c := *n
		c.X, c.Lo, c.Hi = m(n.X), m(n.Lo), m(n.Hi)
		return &c
	case *parser.In:
		c := *n
		c.X = m(n.X)
		c.List = make([]parser.Expr, len(n.List))
		for i, x := range n.List {
			c.List[i] = m(x)
		}
		return &c
	case *parser.IsNull:
		c := *n
		c.X = m(n.X)
		return &c
	case *parser.IsBool:
		c := *n
		c.X = m(n.X)
		return &c
	case *parser.Like:
		c := *n
		c.X, c.Pattern, c.Escape = m(n.X), m(n.Pattern), m(n.Escape)
		return &c
	case *parser.Cast:
		c := *n
		c.X = m(n.X)
		return &c
	}
	return e
}
