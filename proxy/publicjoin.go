package proxy

import (
	"context"
	"slices"
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
//
// In a longer left-deep chain (a star or snowflake schema: private tables
// joined on their privacy unit, public dimension tables on their keys) every
// public table joined as the right side of an INNER or LEFT join is inlined
// the same way, the outermost first, so that its key may be a column of any
// table before it, an earlier public table's included (that column becomes a
// CASE itself when its table is inlined in turn). What remains is one private
// table or a join of private tables, which the analysis checks.
//
// A derived table (or CTE) is inlined inside first, so its rows may come
// from such joins too.
func (s *Session) inlinePublicJoin(ctx context.Context, sel *parser.Select) (*parser.Select, error) {
	pol := s.engine.policy
	if dt, ok := sel.From.(*parser.DerivedTable); ok {
		if inner, ok := dt.Select.(*parser.Select); ok {
			in, err := s.inlinePublicJoin(ctx, inner)
			if err != nil {
				return nil, err
			}
			if in != inner {
				out := *sel
				out.From = &parser.DerivedTable{Select: in, Alias: dt.Alias}
				sel = &out
			}
		}
	}
	for {
		j, ok := sel.From.(*parser.Join)
		if !ok {
			return sel, nil
		}
		lt, lok := j.Left.(*parser.TableName)
		rt, rok := j.Right.(*parser.TableName)
		if lok && rok {
			return s.inlineTwo(ctx, sel, j, lt, rt)
		}
		node, pub, pubTable, err := outermostPublic(pol, j)
		if err != nil {
			return nil, err
		}
		if node == nil {
			for _, tn := range baseTables(j) {
				if t, _ := pol.Table(tn.Name); t != nil && t.Public {
					return nil, Errorf(CodeUnsupported, "unsupported SQL: public table %s in a join of more than two tables: join it after a private table, as the right side of an INNER or LEFT JOIN ON an earlier table's column = its unique key", t.Name)
				}
			}
			return sel, nil // private tables only: the analysis checks the join
		}
		if sel, err = s.inline(ctx, sel, node, node.Left, pub, pubTable); err != nil {
			return nil, err
		}
	}
}

// outermostPublic walks the left spine of a join chain from the top and
// returns the first join whose right side is a public table. Inlining it
// moves an inner join's filter on the key to WHERE, which is the same only
// when no join above it keeps rows of its right side alone (RIGHT, FULL):
// then it is refused.
func outermostPublic(pol *policy.Policy, j *parser.Join) (*parser.Join, *parser.TableName, *policy.Table, error) {
	var above string // the first join above that is neither INNER nor LEFT
	for {
		if tn, ok := j.Right.(*parser.TableName); ok {
			if t, _ := pol.Table(tn.Name); t != nil && t.Public {
				if above != "" {
					return nil, nil, nil, Errorf(CodeUnsupported, "unsupported SQL: a %s JOIN after public table %s in a chain of joins", strings.ToUpper(above), t.Name)
				}
				return j, tn, t, nil
			}
		}
		if j.Kind != "inner" && j.Kind != "left" && above == "" {
			above = j.Kind
		}
		left, ok := j.Left.(*parser.Join)
		if !ok {
			return nil, nil, nil, nil
		}
		j = left
	}
}

// inlineTwo handles a join of exactly two tables.
func (s *Session) inlineTwo(ctx context.Context, sel *parser.Select, j *parser.Join, lt, rt *parser.TableName) (*parser.Select, error) {
	pol := s.engine.policy
	l, _ := pol.Table(lt.Name)
	r, _ := pol.Table(rt.Name)
	if l == nil || r == nil {
		return sel, nil // unknown tables are reported by the analysis
	}
	switch {
	case !l.Public && r.Public:
		return s.inline(ctx, sel, j, lt, rt, r)
	case l.Public && !r.Public && j.Kind == "inner":
		return s.inline(ctx, sel, j, rt, lt, l)
	case !l.Public && !r.Public:
		return sel, nil // a join on the privacy unit: the analysis checks it
	default:
		return nil, Errorf(CodeUnsupported, "unsupported SQL: a %s join that keeps public rows without private ones", strings.ToUpper(j.Kind))
	}
}

func tableName(t *parser.TableName) string {
	if t.Alias != "" {
		return strings.ToLower(t.Alias)
	}
	return strings.ToLower(t.Name)
}

// inline replaces the join j of rest with the public table pub in sel by
// rest alone, pub's columns by lookups on the join key.
func (s *Session) inline(ctx context.Context, sel *parser.Select, j *parser.Join, rest parser.TableExpr, pub *parser.TableName, pubTable *policy.Table) (*parser.Select, error) {
	if j.Kind != "inner" && j.Kind != "left" {
		return nil, Errorf(CodeUnsupported, "unsupported SQL: %s JOIN of a private table", strings.ToUpper(j.Kind))
	}
	restTables := baseTables(rest)
	if len(restTables) == 0 {
		return nil, Errorf(CodeUnsupported, "unsupported SQL: public table %s joined to a derived table or function that reads no table", pubTable.Name)
	}
	pubName := tableName(pub)
	privName := sourceNames(rest)[0]
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
	inRest := slices.ContainsFunc(sourceNames(rest), func(n string) bool { return strings.EqualFold(a.Table, n) })
	if !strings.EqualFold(b.Table, pubName) || !inRest {
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
	keyCol := columnIndex(rows.Columns, b.Name)
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
	// inPrivate reports whether an unqualified name is a column of rest.
	inPrivate := func(name string) bool {
		return slices.ContainsFunc(restTables, func(t *parser.TableName) bool {
			_, ok := s.columnOf(t.Name, name)
			return ok
		})
	}
	var substErr error
	subst := func(e parser.Expr) parser.Expr {
		return parser.MapExpr(e, func(n parser.Expr) (parser.Expr, bool) {
			ref, ok := n.(*parser.ColumnRef)
			if !ok || !strings.EqualFold(ref.Table, pubName) {
				if ok && ref.Table == "" && !inPrivate(ref.Name) {
					if i := columnIndex(rows.Columns, ref.Name); i >= 0 {
						return column(i), true
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
	out.From = withoutJoin(sel.From, j, rest, subst)
	out.Items = make([]parser.SelectItem, len(sel.Items))
	for i, it := range sel.Items {
		if it.Star {
			return nil, Errorf(CodeRefused, "dpproxy refused the query: SELECT * would reveal the rows of private table %s", restTables[0].Name)
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

// sourceNames lists the names a join's columns may be qualified with: each
// table's alias or name, each derived table's alias.
func sourceNames(te parser.TableExpr) []string {
	switch t := te.(type) {
	case *parser.TableName:
		return []string{tableName(t)}
	case *parser.DerivedTable:
		return []string{strings.ToLower(t.Alias)}
	case *parser.Join:
		return append(sourceNames(t.Left), sourceNames(t.Right)...)
	}
	return nil
}

// withoutJoin returns from with the join target replaced by rest, copying
// the joins above it (the statement may be cached and shared) with their ON
// conditions passed through subst. target lies on from's left spine.
func withoutJoin(from parser.TableExpr, target *parser.Join, rest parser.TableExpr, subst func(parser.Expr) parser.Expr) parser.TableExpr {
	j, ok := from.(*parser.Join)
	switch {
	case !ok:
		return from
	case j == target:
		return rest
	}
	cp := *j
	cp.Left = withoutJoin(j.Left, target, rest, subst)
	cp.On = subst(j.On)
	return &cp
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
