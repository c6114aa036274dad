package rewrite

import (
	"strconv"

	"github.com/dpproxy/dpproxy/eval"
	"github.com/dpproxy/dpproxy/parser"
)

// ProvablyEmpty reports whether sel returns no rows whatever the data, from
// its text and the client's parameters alone: LIMIT 0 (any OFFSET; LIMIT ?
// with the parameter 0), or a WHERE that is false or NULL as written (a
// predicate over literals only, or an AND with such a conjunct) in a query
// that does not aggregate without GROUP BY (COUNT(*) ... WHERE 1=0 is one
// row). Tools send such statements to learn a result's columns (Tableau,
// pyodbc); their answer, columns and no rows, reveals nothing.
//
// It never reads data and never errs: what it cannot prove is not empty.
func ProvablyEmpty(sel *parser.Select, params []any) bool {
	if sel.Limit != nil && limitZero(sel.Limit.Count, params) {
		return true
	}
	if sel.Where == nil || !constantFalse(sel.Where) {
		return false
	}
	return len(sel.GroupBy) > 0 || !aggregates(sel)
}

// limitZero: the row count is the literal 0 or a parameter bound to 0 (the
// client's choice, not data's).
func limitZero(e parser.Expr, params []any) bool {
	var v any
	switch x := e.(type) {
	case *parser.Literal:
		v = x.Value
	case *parser.Param:
		if x.Index < 0 || x.Index >= len(params) {
			return false
		}
		v = params[x.Index]
	default:
		return false
	}
	switch n := v.(type) {
	case int64:
		return n == 0
	case int:
		return n == 0
	case uint64:
		return n == 0
	case string:
		// Drivers that send parameters as text (lib/pq) bind "0"; the
		// backend reads it as the integer 0.
		i, err := strconv.ParseInt(n, 10, 64)
		return err == nil && i == 0
	}
	return false
}

// constantFalse: e, or one conjunct of a top-level AND, is a predicate over
// literals only that evaluates to false or NULL.
func constantFalse(e parser.Expr) bool {
	if b, ok := e.(*parser.Binary); ok && b.Op == parser.OpAnd {
		return constantFalse(b.L) || constantFalse(b.R)
	}
	if !literalOnly(e) {
		return false
	}
	v, err := eval.Eval(e, nil)
	if err != nil {
		return false
	}
	truth, isNull := eval.Truthy(v)
	return isNull || !truth
}

// literalOnly: e is built of literals and operators only (no column,
// function, variable, parameter or subquery), so evaluating it is cheap and
// its value the same for every database.
func literalOnly(e parser.Expr) bool {
	ok := true
	walk(e, func(n parser.Expr) bool {
		switch n.(type) {
		case *parser.Literal, *parser.Unary, *parser.Binary, *parser.IsNull, *parser.IsBool, *parser.Between, *parser.In:
			return ok
		}
		ok = false
		return false
	})
	return ok
}

// aggregates: sel's select list, HAVING or ORDER BY calls an aggregate.
func aggregates(sel *parser.Select) bool {
	found := false
	visit := func(n parser.Expr) bool {
		if f, ok := n.(*parser.Func); ok && eval.IsAggregate(f.Name) {
			found = true
		}
		return !found
	}
	for _, it := range sel.Items {
		walk(it.Expr, visit)
	}
	walk(sel.Having, visit)
	for _, o := range sel.OrderBy {
		walk(o.Expr, visit)
	}
	return found
}

// ColumnRefs lists the column references of sel's clauses; ok is false when
// sel has something a probe does not answer: a subquery, a variable, a
// derived table.
func ColumnRefs(sel *parser.Select) (refs []*parser.ColumnRef, ok bool) {
	ok = true
	visit := func(n parser.Expr) bool {
		switch x := n.(type) {
		case *parser.ColumnRef:
			refs = append(refs, x)
		case *parser.Subquery, *parser.ArraySubquery, *parser.Variable:
			ok = false
		}
		return ok
	}
	exprs := []parser.Expr{sel.Where, sel.Having}
	for _, it := range sel.Items {
		exprs = append(exprs, it.Expr)
	}
	exprs = append(exprs, sel.GroupBy...)
	for _, o := range sel.OrderBy {
		exprs = append(exprs, o.Expr)
	}
	if sel.Limit != nil {
		exprs = append(exprs, sel.Limit.Count, sel.Limit.Offset)
	}
	var from func(te parser.TableExpr)
	from = func(te parser.TableExpr) {
		switch t := te.(type) {
		case *parser.TableName:
		case *parser.Join:
			from(t.Left)
			from(t.Right)
			exprs = append(exprs, t.On)
			for _, u := range t.Using {
				refs = append(refs, &parser.ColumnRef{Name: u})
			}
		default:
			ok = false
		}
	}
	from(sel.From)
	for _, e := range exprs {
		walk(e, visit)
	}
	return refs, ok
}
