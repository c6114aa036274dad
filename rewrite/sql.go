package rewrite

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/parser"
)

// buildSQL writes the backend statement of a plan. The result has one row per
// group: the keys, then every quantity of every aggregate, then the number of
// distinct privacy units in the group.
//
// For a table whose privacy unit is a column, contribution bounding follows
// Wilson et al. 2020 (§3, "bounding user contribution"): a random sample of
// at most MaxRows rows per (unit, group), then a random sample of at most
// MaxGroups groups per unit, both with ROW_NUMBER() over a random order in the
// backend. A row-unit table needs neither: each row is its own unit and lies
// in one group.
func (a *analysis) buildSQL() error {
	r := &renderer{dialect: a.in.Dialect, params: a.in.Params}
	r.column = func(ref *parser.ColumnRef) (string, error) {
		name, err := a.column(ref)
		if err != nil {
			return "", err
		}
		return r.ident(name), nil
	}
	where, err := a.whereSQL(r)
	if err != nil {
		return err
	}
	table := r.ident(a.table.Name)
	keys := make([]string, len(a.plan.Keys))
	for i, k := range a.plan.Keys {
		keys[i] = r.ident(k.Name)
	}
	var sql string
	if a.table.UnitIsRow() {
		sql = a.rowUnitSQL(r, table, where, keys)
	} else {
		sql = a.columnUnitSQL(r, table, where, keys)
	}
	a.plan.SQL = sql
	a.plan.Args = r.args
	return nil
}

// whereSQL is the query's WHERE, narrowed to the public values of public
// keys so that rows outside the public domain use no unit's group budget.
func (a *analysis) whereSQL(r *renderer) (string, error) {
	var conds []string
	if w := a.in.Select.Where; w != nil {
		s, err := r.expr(w)
		if err != nil {
			return "", err
		}
		conds = append(conds, s)
	}
	for _, k := range a.plan.Keys {
		if k.Public == nil {
			continue
		}
		vals := make([]string, len(k.Public))
		for i, v := range k.Public {
			vals[i] = r.bind(v)
		}
		conds = append(conds, r.ident(k.Name)+" IN ("+strings.Join(vals, ", ")+")")
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), nil
}

// quantitySQL is the aggregate computing one quantity over rows whose
// argument column is arg.
func (r *renderer) quantitySQL(agg *Aggregate, q Quantity, arg string) string {
	switch q.Kind {
	case QSum:
		return "SUM(" + r.clamp(arg, agg.Lower, agg.Upper) + ")"
	case QCenteredSum:
		mid := (agg.Lower + agg.Upper) / 2
		return "SUM(" + r.clamp(arg, agg.Lower, agg.Upper) + " - " + number(mid) + ")"
	}
	if agg.Column == "" {
		return "COUNT(*)"
	}
	return "COUNT(" + arg + ")"
}

func (a *analysis) rowUnitSQL(r *renderer, table, where string, keys []string) string {
	var cols []string
	cols = append(cols, keys...)
	pos := len(keys)
	for _, agg := range a.plan.Aggs {
		for qi := range agg.Quantities {
			q := &agg.Quantities[qi]
			q.Column = pos
			pos++
			cols = append(cols, r.quantitySQL(agg, *q, r.ident(agg.Column)))
		}
	}
	a.plan.UnitsColumn = pos
	cols = append(cols, "COUNT(*)")
	sql := "SELECT " + strings.Join(cols, ", ") + " FROM " + table + where
	if len(keys) > 0 {
		sql += " GROUP BY " + strings.Join(keys, ", ")
	}
	return sql
}

func (a *analysis) columnUnitSQL(r *renderer, table, where string, keys []string) string {
	unit := r.ident(strings.ToLower(a.table.PrivacyUnit))
	kAlias := make([]string, len(keys))
	for i := range keys {
		kAlias[i] = "dp_k" + strconv.Itoa(i)
	}
	// Innermost: one row per base row, with its unit, keys and argument
	// columns, ranked randomly within (unit, group).
	argAlias := map[string]string{}
	inner := []string{unit + " AS dp_unit"}
	for i, k := range keys {
		inner = append(inner, k+" AS "+kAlias[i])
	}
	for _, agg := range a.plan.Aggs {
		if agg.Column == "" {
			continue
		}
		if _, ok := argAlias[agg.Column]; !ok {
			alias := "dp_a" + strconv.Itoa(len(argAlias))
			argAlias[agg.Column] = alias
			inner = append(inner, r.ident(agg.Column)+" AS "+alias)
		}
	}
	partition := append([]string{unit}, keys...)
	inner = append(inner, fmt.Sprintf("ROW_NUMBER() OVER (PARTITION BY %s ORDER BY %s) AS dp_row_rank",
		strings.Join(partition, ", "), r.random()))
	rows := "SELECT " + strings.Join(inner, ", ") + " FROM " + table + where
	if len(keys) == 0 {
		return a.oneGroupSQL(r, rows, argAlias)
	}

	// Middle: one row per (unit, group) with partial quantities, ranked
	// randomly within the unit.
	middle := []string{"dp_unit"}
	middle = append(middle, kAlias...)
	outer := append([]string{}, kAlias...)
	pos := len(keys)
	for _, agg := range a.plan.Aggs {
		for qi := range agg.Quantities {
			q := &agg.Quantities[qi]
			q.Column = pos
			name := "dp_q" + strconv.Itoa(pos)
			pos++
			middle = append(middle, r.quantitySQL(agg, *q, argAlias[agg.Column])+" AS "+name)
			outer = append(outer, "SUM("+name+")")
		}
	}
	a.plan.UnitsColumn = pos
	outer = append(outer, "COUNT(*)")
	middle = append(middle, fmt.Sprintf("ROW_NUMBER() OVER (PARTITION BY dp_unit ORDER BY %s) AS dp_group_rank", r.random()))
	groups := "SELECT " + strings.Join(middle, ", ") + " FROM (" + rows + ") dp_rows" +
		" WHERE dp_row_rank <= " + strconv.Itoa(a.plan.Contribution.MaxRows) +
		" GROUP BY " + strings.Join(append([]string{"dp_unit"}, kAlias...), ", ")

	sql := "SELECT " + strings.Join(outer, ", ") + " FROM (" + groups + ") dp_groups" +
		" WHERE dp_group_rank <= " + strconv.Itoa(a.plan.Contribution.MaxGroups)
	if len(keys) > 0 {
		sql += " GROUP BY " + strings.Join(kAlias, ", ")
	}
	return sql
}

// oneGroupSQL is columnUnitSQL without GROUP BY: one group, so no unit can
// exceed the group bound and the per-unit grouping level is not needed; the
// row bound alone is applied, in one window pass. No partition selection
// happens, so the unit count is not computed (0).
func (a *analysis) oneGroupSQL(r *renderer, rows string, argAlias map[string]string) string {
	var cols []string
	pos := 0
	for _, agg := range a.plan.Aggs {
		for qi := range agg.Quantities {
			q := &agg.Quantities[qi]
			q.Column = pos
			pos++
			cols = append(cols, r.quantitySQL(agg, *q, argAlias[agg.Column]))
		}
	}
	a.plan.UnitsColumn = pos
	cols = append(cols, "0")
	return "SELECT " + strings.Join(cols, ", ") + " FROM (" + rows + ") dp_rows WHERE dp_row_rank <= " +
		strconv.Itoa(a.plan.Contribution.MaxRows)
}
