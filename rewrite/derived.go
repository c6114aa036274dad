package rewrite

import (
	"strings"

	"github.com/dpproxy/dpproxy/eval"
	"github.com/dpproxy/dpproxy/parser"
)

// flattenDerived rewrites a query over a derived table that only filters and
// projects one source — FROM (SELECT pid, age * 2 AS a FROM pums WHERE ...)
// AS t, or a join, or a derived table grouped by the privacy unit — into the
// same query over that source: every row of the derived table is one row of
// the source, so the privacy unit, contribution bounds and column bounds
// carry over unchanged. Derived tables that group
// are left for perUnitAnalysis (one row per person when they group by the
// privacy unit); those that aggregate without grouping, deduplicate or limit
// rows change what a row is and are refused. Parsed statements are shared, so the result is a new Select.
func flattenDerived(sel *parser.Select) (*parser.Select, error) {
	dt, ok := sel.From.(*parser.DerivedTable)
	if !ok {
		return sel, nil
	}
	inner, ok := dt.Select.(*parser.Select)
	if !ok {
		return nil, unsupported("set operations in a derived table")
	}
	inner, err := flattenDerived(inner)
	if err != nil {
		return nil, err
	}
	// Before anything below walks the inlined expressions as trees.
	if err := checkExpandedSize(inner); err != nil {
		return nil, err
	}
	if inner.Distinct || inner.Limit != nil || inner.ForUpdate {
		return nil, refuse("a derived table that deduplicates or limits rows no longer has one row per row of its table, so its privacy unit is lost; filter and project only, or group by the privacy unit")
	}
	if len(inner.GroupBy) > 0 || inner.Having != nil {
		// Grouped: a table with one row per person if it groups by the
		// privacy unit (perUnitAnalysis decides).
		out := *sel
		out.From = &parser.DerivedTable{Select: inner, Alias: dt.Alias}
		return &out, nil
	}
	switch inner.From.(type) {
	case *parser.TableName, *parser.Join, *parser.DerivedTable:
		// One table, a join (whose analysis checks it), or a derived table
		// grouped by the privacy unit (perUnitAnalysis): rows of the derived
		// table are rows of its source either way.
	default:
		return nil, unsupported("a derived table over nothing or a function")
	}
	// The derived table's columns: alias (or column name) → expression.
	cols := map[string]parser.Expr{}
	star := false
	for _, it := range inner.Items {
		if it.Star {
			star = true
			continue
		}
		var agg bool
		walk(it.Expr, func(n parser.Expr) bool {
			if f, ok := n.(*parser.Func); ok && (eval.IsAggregate(f.Name) || f.Over) {
				agg = true
			}
			return !agg
		})
		if agg {
			return nil, refuse("a derived table that aggregates no longer has one row per row of its table, so its privacy unit is lost")
		}
		name := it.Alias
		if name == "" {
			ref, ok := it.Expr.(*parser.ColumnRef)
			if !ok {
				return nil, unsupported("an unnamed expression in a derived table (give it an alias)")
			}
			name = ref.Name
		}
		cols[strings.ToLower(name)] = it.Expr
	}
	alias := strings.ToLower(dt.Alias)
	var substErr error
	subst := func(e parser.Expr) parser.Expr {
		return parser.MapExpr(e, func(n parser.Expr) (parser.Expr, bool) {
			ref, ok := n.(*parser.ColumnRef)
			if !ok {
				return nil, false
			}
			if ref.Table != "" && !strings.EqualFold(ref.Table, alias) {
				substErr = &UnknownColumnError{Column: ref.Table + "." + ref.Name, Table: dt.Alias}
				return n, true
			}
			if e, ok := cols[strings.ToLower(ref.Name)]; ok {
				return e, true
			}
			if star {
				return &parser.ColumnRef{Name: ref.Name}, true
			}
			substErr = &UnknownColumnError{Column: ref.Name, Table: dt.Alias}
			return n, true
		})
	}
	out := *sel
	out.From = inner.From
	out.Items = make([]parser.SelectItem, len(sel.Items))
	for i, it := range sel.Items {
		it.Expr = subst(it.Expr)
		out.Items[i] = it
	}
	out.Where = subst(sel.Where)
	if inner.Where != nil {
		if out.Where == nil {
			out.Where = inner.Where
		} else {
			out.Where = &parser.Binary{Op: parser.OpAnd, L: inner.Where, R: out.Where}
		}
	}
	out.GroupBy = make([]parser.Expr, len(sel.GroupBy))
	for i, g := range sel.GroupBy {
		out.GroupBy[i] = subst(g)
	}
	out.Having = subst(sel.Having)
	out.OrderBy = make([]parser.OrderItem, len(sel.OrderBy))
	for i, o := range sel.OrderBy {
		o.Expr = subst(o.Expr)
		out.OrderBy[i] = o
	}
	if substErr != nil {
		return nil, substErr
	}
	return &out, nil
}
