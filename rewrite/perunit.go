package rewrite

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/eval"
	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
)

// perUnitAnalysis is the analysis of a query over a derived table that
// groups one private table, or a join of private tables on their unit, by
// the privacy unit:
//
//	SELECT AVG(total) FROM (SELECT pid, SUM(income) AS total FROM pums GROUP BY pid) t
//
// Such a table has one row per person, computed from that person's rows
// alone, so it is a private table whose privacy unit is the row. Its
// columns get public bounds from the policy's: each person's rows are
// first bounded to max_rows_per_unit = m (a random sample, as everywhere)
// and their values clamped, so SUM(x) over x in [lo, hi] lies in
// [min(lo, m·lo), max(hi, m·hi)], COUNT in [0, m], AVG, MIN and MAX in
// [lo, hi]. The backend computes the per-person rows; the outer query is
// planned over them like over any row-unit table. The derived table's
// HAVING filters persons: it becomes a WHERE of the outer query over the
// selected aggregates.
func perUnitAnalysis(in Input, dt *parser.DerivedTable) (*analysis, error) {
	inner, ok := dt.Select.(*parser.Select)
	if !ok {
		return nil, unsupported("set operations in a derived table")
	}
	innerIn := in
	innerIn.Select = inner
	var ia *analysis
	var err error
	switch from := inner.From.(type) {
	case *parser.TableName:
		ia, err = tableAnalysis(innerIn, from)
	case *parser.Join:
		// A join on the privacy unit is a table of its persons' rows
		// (joinAnalysis), bounded to Π mᵢ rows a person; in a LEFT or RIGHT
		// join only the kept table's unit identifies every row's person
		// (isUnit).
		ia, err = joinAnalysis(innerIn, from)
	default:
		return nil, unsupported("a derived table that groups rows of a derived table (group a private table or a join by the privacy unit)")
	}
	if err != nil {
		return nil, err
	}
	lost := func(why string) error {
		return refuse("a derived table that %s no longer has one row per person of %s, so its privacy unit is lost; group by the privacy unit alone (GROUP BY %s)",
			why, ia.table.Name, ia.table.PrivacyUnit)
	}
	if ia.table.UnitIsRow() {
		return nil, refuse("a derived table that groups rows of %s, where each row is its own person, no longer has one row per person, so its privacy unit is lost", ia.table.Name)
	}
	if len(inner.GroupBy) != 1 || !ia.isUnit(inner.GroupBy[0]) {
		return nil, lost("groups by anything but the privacy unit")
	}
	if inner.Where != nil {
		if err := ia.rowLevel(inner.Where, "WHERE"); err != nil {
			return nil, err
		}
	}
	p := &perUnit{ia: ia, m: ia.table.MaxRowsPerUnit, argSQL: map[string]string{}}
	t := &policy.Table{
		Name:             "derived table " + dt.Alias + " (one row per " + ia.table.PrivacyUnit + " of " + ia.table.Name + ")",
		PrivacyUnit:      policy.PrivacyUnitRow,
		MaxRowsPerUnit:   1,
		MaxGroupsPerUnit: 1,
		Columns:          map[string]*policy.Column{},
	}
	for _, it := range inner.Items {
		if it.Star {
			return nil, unsupported("* in a derived table grouped by the privacy unit (name the aggregates)")
		}
		name := strings.ToLower(it.Alias)
		if name == "" {
			ref, ok := it.Expr.(*parser.ColumnRef)
			if !ok {
				return nil, unsupported("an unnamed aggregate in a derived table (give it an alias)")
			}
			name = strings.ToLower(ref.Name)
		}
		if t.Columns[name] != nil {
			return nil, unsupported("two columns named %s in a derived table", name)
		}
		col, sql, err := p.output(it.Expr)
		if err != nil {
			return nil, err
		}
		col.Name = name
		t.Columns[name] = col
		p.names = append(p.names, name)
		p.sqls = append(p.sqls, sql)
	}
	a := blankAnalysis(in, t)
	a.alias = strings.ToLower(dt.Alias)
	for name := range t.Columns {
		a.columns[name] = true
	}
	if inner.Having != nil {
		filter, err := p.havingFilter(inner)
		if err != nil {
			return nil, err
		}
		sel := *in.Select
		if sel.Where == nil {
			sel.Where = filter
		} else {
			sel.Where = &parser.Binary{Op: parser.OpAnd, L: filter, R: sel.Where}
		}
		a.in.Select = &sel
	}
	alias := a.alias
	if alias == "" {
		alias = "dp_per_unit"
	}
	a.from = func(r *renderer) (string, error) {
		s, err := p.sql()
		if err != nil {
			return "", err
		}
		return "(" + s + ") " + r.ident(alias), nil
	}
	return a, nil
}

// perUnit builds the per-person rows of a derived table grouped by the
// privacy unit.
type perUnit struct {
	ia     *analysis // the inner query over the private table
	m      int       // rows kept per person
	names  []string  // output columns
	sqls   []string  // their SQL over the bounded rows (dp_unit, dp_a<i>)
	args   []string  // row-level argument keys, in order
	argSQL map[string]string
}

// arg registers a row-level argument (its SQL projected as dp_a<i> of the
// bounded rows) and returns its column name there.
func (p *perUnit) arg(key, sql string) string {
	i := slices.Index(p.args, key)
	if i < 0 {
		i = len(p.args)
		p.args = append(p.args, key)
		p.argSQL[key] = sql
	}
	return argAlias(i) // the name unitRows gives it
}

// output checks one select-list item of the derived table and returns its
// column's public description and its SQL over the bounded rows.
func (p *perUnit) output(e parser.Expr) (*policy.Column, string, error) {
	ia := p.ia
	if ia.isUnit(e) {
		// The person's id: one row each, so it may not be a group key.
		return &policy.Column{Type: policy.TypeString, Unique: true}, "dp_unit", nil
	}
	f, ok := e.(*parser.Func)
	if !ok || !eval.IsAggregate(f.Name) || f.Over {
		return nil, "", refuse("%s in a derived table grouped by %s must be an aggregate of the person's rows (COUNT, SUM, AVG, MIN, MAX) or %s itself",
			exprText(e), ia.table.PrivacyUnit, ia.table.PrivacyUnit)
	}
	upper := strings.ToUpper(f.Name)
	r := ia.sqlRenderer()
	m := float64(p.m)
	intCol := func(lo, hi float64) *policy.Column {
		return &policy.Column{Type: policy.TypeInt, Lower: &lo, Upper: &hi}
	}
	if f.Name == "count" && (f.Star || isNonNullLiteral(f.Args)) && !f.Distinct {
		return intCol(1, m), "COUNT(*)", nil
	}
	if len(f.Args) != 1 || f.Star {
		return nil, "", unsupported("%s with %d arguments in a derived table", upper, len(f.Args))
	}
	x := f.Args[0]
	if err := ia.rowLevel(x, "the argument of "+upper); err != nil {
		return nil, "", err
	}
	raw, err := r.expr(x)
	if err != nil {
		return nil, "", err
	}
	if f.Name == "count" {
		col := p.arg("raw "+ia.text(x), raw)
		if f.Distinct {
			return intCol(0, m), "COUNT(DISTINCT " + col + ")", nil
		}
		return intCol(0, m), "COUNT(" + col + ")", nil
	}
	if f.Distinct {
		return nil, "", unsupported("%s(DISTINCT ...) in a derived table", upper)
	}
	switch f.Name {
	case "sum", "avg", "min", "max":
	default:
		return nil, "", unsupported("%s in a derived table grouped by %s (COUNT, SUM, AVG, MIN and MAX)", upper, ia.table.PrivacyUnit)
	}
	b, err := ia.bound(x)
	if err != nil {
		var nb *noBoundError
		if errors.As(err, &nb) {
			return nil, "", refuse("%s(%s) needs a public bound for %s: add lower and upper for its columns to the policy of %s", upper, exprText(x), nb.expr, ia.table.Name)
		}
		return nil, "", err
	}
	col := p.arg("clamped "+ia.text(x), r.clamp(r.asNumber(x, raw), b.lo, b.hi))
	lo, hi := b.lo, b.hi
	typ := policy.TypeFloat
	if b.isInt && f.Name != "avg" {
		typ = policy.TypeInt
	}
	if f.Name == "sum" {
		// 1 to m clamped values.
		lo, hi = math.Min(lo, m*lo), math.Max(hi, m*hi)
	}
	return &policy.Column{Type: typ, Lower: &lo, Upper: &hi}, upper + "(" + col + ")", nil
}

func isNonNullLiteral(args []parser.Expr) bool {
	if len(args) != 1 {
		return false
	}
	lit, ok := args[0].(*parser.Literal)
	return ok && lit.Value != nil
}

// havingFilter rewrites the derived table's HAVING as a filter on its
// output columns: every aggregate in it must be one the table selects.
func (p *perUnit) havingFilter(inner *parser.Select) (parser.Expr, error) {
	// The renderer writes no aggregate, so aggregates are compared by
	// their own text.
	text := func(e parser.Expr) string {
		f, ok := e.(*parser.Func)
		if !ok {
			return exprText(e)
		}
		args := make([]string, len(f.Args))
		for i, x := range f.Args {
			args[i] = exprText(x)
		}
		if f.Star {
			args = []string{"*"}
		}
		distinct := ""
		if f.Distinct {
			distinct = "DISTINCT "
		}
		return strings.ToLower(f.Name) + "(" + distinct + strings.Join(args, ", ") + ")"
	}
	byText := map[string]string{}
	for i, it := range inner.Items {
		byText[text(it.Expr)] = p.names[i]
	}
	var err error
	out := parser.MapExpr(inner.Having, func(n parser.Expr) (parser.Expr, bool) {
		switch n := n.(type) {
		case *parser.Func:
			if !eval.IsAggregate(n.Name) {
				return nil, false
			}
		case *parser.ColumnRef:
		default:
			return nil, false
		}
		if name, ok := byText[text(n)]; ok {
			return &parser.ColumnRef{Name: name}, true
		}
		if ref, ok := n.(*parser.ColumnRef); ok && ref.Table == "" {
			for _, name := range p.names {
				if strings.EqualFold(name, ref.Name) {
					return &parser.ColumnRef{Name: name}, true // an alias
				}
			}
		}
		if err == nil {
			err = unsupported("HAVING %s in a derived table: HAVING may only use the aggregates and columns the derived table selects", text(n))
		}
		return n, true
	})
	return out, err
}

// sql is the per-person rows: at most m random rows of each person, their
// arguments clamped, grouped by person.
func (p *perUnit) sql() (string, error) {
	ia := p.ia
	r := ia.sqlRenderer()
	table, err := ia.fromSQL(r)
	if err != nil {
		return "", err
	}
	where, err := ia.whereSQL(r)
	if err != nil {
		return "", err
	}
	rows, _ := ia.unitRows(r, table, where, nil, p.args, p.argSQL)
	cols := make([]string, len(p.names))
	for i, name := range p.names {
		cols[i] = p.sqls[i] + " AS " + r.ident(name)
	}
	return "SELECT " + strings.Join(cols, ", ") + " FROM (" + rows + ") dp_rows WHERE dp_row_rank <= " + strconv.Itoa(p.m) +
		" GROUP BY dp_unit", nil
}
