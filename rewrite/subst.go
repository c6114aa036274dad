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
			text = a.text(e)
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
	if e == nil || (!a.hasExprKeys() && a.sides == nil) {
		return e
	}
	return parser.MapExpr(e, func(n parser.Expr) (parser.Expr, bool) {
		if f, ok := n.(*parser.Func); ok && eval.IsAggregate(f.Name) {
			return n, true // keep aggregates (and their pointers) as they are
		}
		if ref, ok := n.(*parser.ColumnRef); ok && a.sides != nil {
			// In a join a key column is named "alias.column"; the engine
			// finds keys by name.
			if name, err := a.column(ref); err == nil && a.keyIndex(name) >= 0 {
				return &parser.ColumnRef{Name: name}, true
			}
			return nil, false
		}
		if i := a.exprKey(n); i >= 0 {
			return &parser.ColumnRef{Name: a.plan.Keys[i].Name}, true
		}
		return nil, false
	})
}
