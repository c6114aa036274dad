package proxy

import (
	"context"
	"strings"

	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
)

// maxInlinedRows bounds the public table a join may inline.
const maxInlinedRows = 10000

// inlinePublicJoin answers a join of a private table with a public one, on a
// key the policy declares unique in the public table, as a query over the
// private table alone: each public column becomes CASE key WHEN v THEN ...
// over the public table's rows (public data, read freely), and an inner join
// keeps the private rows whose key the public table has. Each private row
// meets at most one public row, so the privacy unit, the contribution
// bounds and the sensitivity are those of the private table; the public
// columns' bounds follow from their values by interval arithmetic.
func (s *Session) inlinePublicJoin(ctx context.Context, sel *parser.Select) (*parser.Select, error) {
	j, ok := sel.From.(*parser.Join)
	if !ok {
		return sel, nil
	}
	pol := s.engine.policy
	lt, lok := j.Left.(*parser.TableName)
	rt, rok := j.Right.(*parser.TableName)
	if !lok || !rok {
		for _, tn := range baseTables(j) {
			if t, _ := pol.Table(tn.Name); t != nil && t.Public {
				return nil, Errorf(CodeUnsupported, "unsupported SQL: a join of more than two tables with public table %s (a private table joins a public one two tables at a time)", t.Name)
			}
		}
		return sel, nil // private tables only: the analysis checks the join
	}
	l, _ := pol.Table(lt.Name)
	r, _ := pol.Table(rt.Name)
	if l == nil || r == nil {
		return sel, nil // unknown tables are reported by the analysis
	}
	var priv, pub *parser.TableName
	var pubTable *policy.Table
	switch {
	case !l.Public && r.Public:
		priv, pub, pubTable = lt, rt, r
	case l.Public && !r.Public && j.Kind == "inner":
		priv, pub, pubTable = rt, lt, l
	case !l.Public && !r.Public:
		return sel, nil // a join on the privacy unit: the analysis checks it
	default:
		return nil, Errorf(CodeUnsupported, "unsupported SQL: a %s join that keeps public rows without private ones", strings.ToUpper(j.Kind))
	}
	if j.Kind != "inner" && j.Kind != "left" {
		return nil, Errorf(CodeUnsupported, "unsupported SQL: %s JOIN of a private table", strings.ToUpper(j.Kind))
	}
	name := func(t *parser.TableName) string {
		if t.Alias != "" {
			return strings.ToLower(t.Alias)
		}
		return strings.ToLower(t.Name)
	}
	pubName, privName := name(pub), name(priv)
	eq, ok := j.On.(*parser.Binary)
	if !ok || eq.Op != parser.OpEQ || len(j.Using) > 0 {
		return nil, Errorf(CodeRefused, "dpproxy refused the query: a private table joins a public one only ON private.column = public.unique_key")
	}
	a, aok := eq.L.(*parser.ColumnRef)
	b, bok := eq.R.(*parser.ColumnRef)
	if !aok || !bok {
		return nil, Errorf(CodeRefused, "dpproxy refused the query: a private table joins a public one only ON private.column = public.unique_key")
	}
	if strings.EqualFold(a.Table, pubName) {
		a, b = b, a
	}
	if !strings.EqualFold(b.Table, pubName) || !strings.EqualFold(a.Table, privName) {
		return nil, Errorf(CodeRefused, "dpproxy refused the query: qualify both join columns with their tables (ON %s.col = %s.key)", privName, pubName)
	}
	key, _ := pubTable.Column(b.Name)
	if key == nil || !key.Unique {
		return nil, Errorf(CodeRefused, "dpproxy refused the query: %s.%s is not declared unique in the policy, so a private row could meet several public rows", pubTable.Name, b.Name)
	}
	rows, err := s.publicSelect(ctx, &parser.Select{
		Items: []parser.SelectItem{{Star: true}},
		From:  &parser.TableName{Schema: pub.Schema, Name: pub.Name},
		Limit: &parser.Limit{Count: &parser.Literal{Value: int64(maxInlinedRows + 1)}},
	}, nil)
	if err != nil {
		return nil, err
	}
	if len(rows.Rows) > maxInlinedRows {
		return nil, Errorf(CodeUnsupported, "unsupported SQL: joining a public table of more than %d rows", maxInlinedRows)
	}
	keyCol := -1
	for i, c := range rows.Columns {
		if strings.EqualFold(c.Name, b.Name) {
			keyCol = i
		}
	}
	if keyCol < 0 {
		return nil, Errorf(CodeUnknownColumn, "Unknown column '%s.%s'", pub.Name, b.Name)
	}
	privKey := &parser.ColumnRef{Table: a.Table, Name: a.Name}
	// column returns the CASE that looks a public column up by the key.
	column := func(col int) parser.Expr {
		c := &parser.Case{Operand: privKey}
		for _, row := range rows.Rows {
			if row[keyCol] == nil {
				continue
			}
			c.Whens = append(c.Whens, parser.When{Cond: &parser.Literal{Value: row[keyCol]}, Result: &parser.Literal{Value: row[col]}})
		}
		return c
	}
	var substErr error
	subst := func(e parser.Expr) parser.Expr {
		return parser.MapExpr(e, func(n parser.Expr) (parser.Expr, bool) {
			ref, ok := n.(*parser.ColumnRef)
			if !ok || !strings.EqualFold(ref.Table, pubName) {
				if ok && ref.Table == "" {
					if _, inPriv := s.columnOf(priv.Name, ref.Name); !inPriv {
						if i := columnIndex(rows.Columns, ref.Name); i >= 0 {
							return column(i), true
						}
					}
				}
				return nil, false
			}
			i := columnIndex(rows.Columns, ref.Name)
			if i < 0 {
				substErr = Errorf(CodeUnknownColumn, "Unknown column '%s.%s'", ref.Table, ref.Name)
				return n, true
			}
			return column(i), true
		})
	}
	out := *sel
	out.From = priv
	out.Items = make([]parser.SelectItem, len(sel.Items))
	for i, it := range sel.Items {
		if it.Star {
			return nil, Errorf(CodeRefused, "dpproxy refused the query: SELECT * would reveal the rows of private table %s", priv.Name)
		}
		it.Expr = subst(it.Expr)
		out.Items[i] = it
	}
	out.Where = subst(sel.Where)
	if j.Kind == "inner" {
		in := &parser.In{X: privKey}
		for _, row := range rows.Rows {
			if row[keyCol] != nil {
				in.List = append(in.List, &parser.Literal{Value: row[keyCol]})
			}
		}
		if len(in.List) == 0 {
			in.List = []parser.Expr{&parser.Literal{Value: nil}}
		}
		if out.Where == nil {
			out.Where = in
		} else {
			out.Where = &parser.Binary{Op: parser.OpAnd, L: in, R: out.Where}
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
	return &out, substErr
}

func columnIndex(cols []Column, name string) int {
	for i, c := range cols {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// columnOf reports whether the backend table has the column.
func (s *Session) columnOf(table, column string) (string, bool) {
	cols, _ := s.engine.Columns(table)
	for _, c := range cols {
		if strings.EqualFold(c, column) {
			return c, true
		}
	}
	return "", false
}
