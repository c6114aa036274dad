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
	r := a.sqlRenderer()
	where, err := a.whereSQL(r)
	if err != nil {
		return err
	}
	keys := make([]string, len(a.plan.Keys))
	for i, k := range a.plan.Keys {
		if keys[i], err = r.expr(k.Expr); err != nil {
			return err
		}
	}
	args, argSQL, err := a.argumentsSQL(r)
	if err != nil {
		return err
	}
	table, err := a.fromSQL(r)
	if err != nil {
		return err
	}
	var sql string
	switch {
	case a.table.UnitIsRow():
		sql = a.rowUnitSQL(r, table, where, keys, argSQL)
	case len(keys) == 0:
		sql = a.oneGroupSQL(r, table, where, args, argSQL)
		a.plan.Fractional = !a.hasDistinct()
	case a.hasDistinct():
		sql = a.sampledGroupSQL(r, table, where, keys, args, argSQL)
	default:
		sql = a.columnUnitSQL(r, table, where, keys, args, argSQL)
		a.plan.Fractional = true
	}
	if err := a.quantileHistograms(r, table, where, keys); err != nil {
		return err
	}
	a.plan.SQL = sql
	return nil
}

// sqlRenderer renders expressions over the query's one table.
func (a *analysis) sqlRenderer() *renderer {
	r := &renderer{dialect: a.in.Dialect, params: a.in.Params, total: a}
	r.column = func(ref *parser.ColumnRef) (string, error) {
		name, err := a.column(ref)
		if err != nil {
			return "", err
		}
		return a.nameSQL(r, name), nil
	}
	r.dateColumn = func(e parser.Expr) bool {
		_, ok := a.dateColumn(e)
		return ok
	}
	return r
}

// argumentsSQL renders each distinct aggregate argument once. args lists the
// keys in order; argSQL maps an argument key to its SQL.
func (a *analysis) argumentsSQL(r *renderer) ([]string, map[string]string, error) {
	var args []string
	argSQL := map[string]string{}
	for _, agg := range a.plan.Aggs {
		if agg.Arg == nil {
			continue
		}
		if _, ok := argSQL[agg.Key]; ok {
			continue
		}
		s, err := r.expr(agg.Arg)
		if err != nil {
			return nil, nil, err
		}
		s = r.asNumber(agg.Arg, s)
		args = append(args, agg.Key)
		argSQL[agg.Key] = s
	}
	return args, argSQL, nil
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
		s, err := r.expr(k.Expr)
		if err != nil {
			return "", err
		}
		vals := make([]string, len(k.Public))
		for i, v := range k.Public {
			vals[i] = r.bind(v)
		}
		conds = append(conds, s+" IN ("+strings.Join(vals, ", ")+")")
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), nil
}

// quantitySQL is the aggregate computing one quantity over rows whose
// argument is arg (SQL); units is the SQL of the privacy unit.
//
// The sums cannot fail either (total.go): SQLite's SUM raises "integer
// overflow" past 2⁶³, so it sums REAL values there; a square of a value up
// to maxBound overflows BIGINT (MySQL) and a square of an int4 above 46340
// overflows int4 (PostgreSQL), so squares are DOUBLE in MySQL and SQLite
// and NUMERIC in PostgreSQL, where a double's square can underflow, which
// PostgreSQL raises. MySQL's and PostgreSQL's SUM of integers is DECIMAL /
// NUMERIC (or BIGINT over int4), which cannot overflow.
func (r *renderer) quantitySQL(agg *Aggregate, q Quantity, arg, units string) string {
	mid := number((agg.Lower + agg.Upper) / 2)
	clamped := r.clamp(arg, agg.Lower, agg.Upper)
	if r.dialect == parser.SQLite {
		clamped = "CAST(" + clamped + " AS REAL)"
	}
	switch q.Kind {
	case QSum:
		return "SUM(" + clamped + ")"
	case QCenteredSum:
		return "SUM(" + clamped + " - " + mid + ")"
	case QCenteredSquares:
		switch r.dialect {
		case parser.MySQL:
			clamped = "CAST(" + clamped + " AS DOUBLE)"
		case parser.PostgreSQL:
			clamped = "CAST(" + clamped + " AS NUMERIC)"
		}
		d := "(" + clamped + " - " + mid + ")"
		return "SUM(" + d + " * " + d + ")"
	case QDistinct:
		return "COUNT(DISTINCT " + arg + ")"
	case QUnits:
		return "COUNT(DISTINCT " + units + ")"
	}
	if agg.Arg == nil {
		return "COUNT(*)"
	}
	return "COUNT(" + arg + ")"
}

// placeQuantities numbers every quantity's result column from pos on and
// returns the next free position.
func (a *analysis) placeQuantities(pos int, emit func(agg *Aggregate, q *Quantity)) int {
	for _, agg := range a.plan.Aggs {
		for qi := range agg.Quantities {
			q := &agg.Quantities[qi]
			q.Column = pos
			pos++
			emit(agg, q)
		}
	}
	return pos
}

func (a *analysis) rowUnitSQL(r *renderer, table, where string, keys []string, argSQL map[string]string) string {
	cols := append([]string{}, keys...)
	a.plan.UnitsColumn = a.placeQuantities(len(keys), func(agg *Aggregate, q *Quantity) {
		if q.Kind == QUnits { // each row is a unit
			cols = append(cols, "COUNT(*)")
			return
		}
		cols = append(cols, r.quantitySQL(agg, *q, argSQL[agg.Key], ""))
	})
	cols = append(cols, "COUNT(*)")
	sql := "SELECT " + strings.Join(cols, ", ") + " FROM " + table + where
	if len(keys) > 0 {
		sql += " GROUP BY " + ordinals(len(keys))
	}
	return sql
}

// unitRows is one row per base row of a unit-column table, with its unit,
// keys and aggregate arguments, ranked randomly within (unit, group): the
// sampled form of contribution bounding, for distinct counts.
func (a *analysis) unitRows(r *renderer, table, where string, keys, args []string, argSQL map[string]string) (string, map[string]string) {
	unit := a.unitSQL(r)
	inner := []string{unit + " AS dp_unit"}
	for i, k := range keys {
		inner = append(inner, k+" AS "+keyAlias(i))
	}
	alias := map[string]string{}
	for i, key := range args {
		alias[key] = argAlias(i)
		inner = append(inner, argSQL[key]+" AS "+alias[key])
	}
	partition := append([]string{unit}, keys...)
	inner = append(inner, fmt.Sprintf("ROW_NUMBER() OVER (PARTITION BY %s ORDER BY %s) AS dp_row_rank",
		strings.Join(partition, ", "), r.random()))
	if len(keys) > 0 {
		inner = append(inner, r.random()+" AS dp_group_draw")
	}
	return "SELECT " + strings.Join(inner, ", ") + " FROM " + table + where, alias
}

// sampledGroupRows bounds a unit-column table's rows by sampling, for
// quantities that need whole rows (distinct counts, quantile histograms)
// with GROUP BY: a row is kept when it is among MaxRows random rows of its
// (unit, group) and its group among MaxGroups random groups of its unit
// (Wilson et al. 2020, §3). A group's random order is the draw of its
// first-ranked row, so it does not depend on how many rows the group has
// (the smallest of a group's draws would favour big groups); ties are broken
// by the keys, so no two groups of a unit share a rank and no unit keeps
// more than MaxGroups groups. The result has dp_unit, dp_k<i>, the
// arguments (alias) and nothing else the caller needs.
func (a *analysis) sampledGroupRows(r *renderer, table, where string, keys, args []string, argSQL map[string]string) (string, map[string]string) {
	rows, alias := a.unitRows(r, table, where, keys, args, argSQL)
	kAlias := keyAliases(len(keys))
	drawn := "SELECT dp_rows.*, MAX(CASE WHEN dp_row_rank = 1 THEN dp_group_draw END) OVER (PARTITION BY dp_unit, " +
		strings.Join(kAlias, ", ") + ") AS dp_group_order FROM (" + rows + ") dp_rows"
	ranked := "SELECT dp_drawn.*, DENSE_RANK() OVER (PARTITION BY dp_unit ORDER BY dp_group_order, " +
		strings.Join(kAlias, ", ") + ") AS dp_group_rank FROM (" + drawn + ") dp_drawn"
	return "SELECT * FROM (" + ranked + ") dp_ranked WHERE dp_row_rank <= " + strconv.Itoa(a.plan.Contribution.MaxRows) +
		" AND dp_group_rank <= " + strconv.Itoa(a.plan.Contribution.MaxGroups), alias
}

// sampledGroupSQL is the unit-column plan with GROUP BY for a query with a
// distinct count: the quantities over sampled rows (sampledGroupRows), whole
// rows, so counts stay integers.
func (a *analysis) sampledGroupSQL(r *renderer, table, where string, keys, args []string, argSQL map[string]string) string {
	rows, alias := a.sampledGroupRows(r, table, where, keys, args, argSQL)
	cols := keyAliases(len(keys))
	a.plan.UnitsColumn = a.placeQuantities(len(keys), func(agg *Aggregate, q *Quantity) {
		cols = append(cols, r.quantitySQL(agg, *q, alias[agg.Key], "dp_unit"))
	})
	cols = append(cols, "COUNT(DISTINCT dp_unit)")
	return "SELECT " + strings.Join(cols, ", ") + " FROM (" + rows + ") dp_sampled GROUP BY " + ordinals(len(keys))
}

// Contribution bounding for a table whose privacy unit is a column scales
// each unit's rows instead of sampling them: with c rows of a unit in a
// group and the bound m = MaxRows, every partial quantity of the unit is
// multiplied by f = min(1, m/c) (and its row count is min(c, m)). A unit then
// adds at most m times the per-row bound to each quantity — the sensitivity
// of sensitivity.go — and f·Σ is exactly the expected value of the sum over a
// uniformly random sample of m of its rows (the sampling of Wilson et al.
// 2020, §3), computed without the per-row random sort, in one GROUP BY per
// unit. Distinct counts cannot be scaled: a query with COUNT(DISTINCT col)
// keeps the sampled rows (unitRows).

// scaledPartial is one quantity's partial for the rows of one unit (and
// group), scaled by f.
func (a *analysis) scaledPartial(r *renderer, agg *Aggregate, q Quantity, argSQL map[string]string) string {
	m := strconv.Itoa(a.plan.Contribution.MaxRows)
	switch {
	case q.Kind == QUnits:
		return "1"
	case q.Kind == QCount && agg.Arg == nil:
		return "(CASE WHEN COUNT(*) > " + m + " THEN " + m + " ELSE COUNT(*) END)"
	}
	return "(" + r.quantitySQL(agg, q, argSQL[agg.Key], "") + " * (CASE WHEN COUNT(*) > " + m +
		" THEN " + m + ".0 / COUNT(*) ELSE 1 END))"
}

// hasDistinct reports whether a quantity needs the rows themselves.
func (a *analysis) hasDistinct() bool {
	for _, agg := range a.plan.Aggs {
		for _, q := range agg.Quantities {
			if q.Kind == QDistinct {
				return true
			}
		}
	}
	return false
}

// oneGroupSQL is the unit-column plan without GROUP BY: one group, so no unit
// can exceed the group bound and only the row bound applies.
func (a *analysis) oneGroupSQL(r *renderer, table, where string, args []string, argSQL map[string]string) string {
	// One group needs no partition selection, so no unit count (0);
	// COUNT(DISTINCT pid) has its own quantity.
	if a.hasDistinct() {
		rows, alias := a.unitRows(r, table, where, nil, args, argSQL)
		var cols []string
		a.plan.UnitsColumn = a.placeQuantities(0, func(agg *Aggregate, q *Quantity) {
			cols = append(cols, r.quantitySQL(agg, *q, alias[agg.Key], "dp_unit"))
		})
		return "SELECT " + strings.Join(append(cols, "0"), ", ") + " FROM (" + rows + ") dp_rows WHERE dp_row_rank <= " +
			strconv.Itoa(a.plan.Contribution.MaxRows)
	}
	unit := a.unitSQL(r)
	inner := []string{unit + " AS dp_unit"}
	var outer []string
	a.plan.UnitsColumn = a.placeQuantities(0, func(agg *Aggregate, q *Quantity) {
		name := "dp_q" + strconv.Itoa(q.Column)
		inner = append(inner, a.scaledPartial(r, agg, *q, argSQL)+" AS "+name)
		outer = append(outer, "SUM("+name+")")
	})
	return "SELECT " + strings.Join(append(outer, "0"), ", ") + " FROM (SELECT " + strings.Join(inner, ", ") +
		" FROM " + table + where + " GROUP BY " + unit + ") dp_units"
}

// columnUnitSQL is the unit-column plan with GROUP BY: one row per (unit,
// group) with its scaled partials, at most MaxGroups groups per unit kept at
// random (ROW_NUMBER over a random order), then summed per group.
func (a *analysis) columnUnitSQL(r *renderer, table, where string, keys, args []string, argSQL map[string]string) string {
	unit := a.unitSQL(r)
	kAlias := keyAliases(len(keys))
	middle := []string{unit + " AS dp_unit"}
	for i, k := range keys {
		middle = append(middle, k+" AS "+kAlias[i])
	}
	outer := append([]string{}, kAlias...)
	a.plan.UnitsColumn = a.placeQuantities(len(keys), func(agg *Aggregate, q *Quantity) {
		name := "dp_q" + strconv.Itoa(q.Column)
		middle = append(middle, a.scaledPartial(r, agg, *q, argSQL)+" AS "+name)
		outer = append(outer, "SUM("+name+")")
	})
	outer = append(outer, "COUNT(*)")
	middle = append(middle, fmt.Sprintf("ROW_NUMBER() OVER (PARTITION BY %s ORDER BY %s) AS dp_group_rank", unit, r.random()))
	groups := "SELECT " + strings.Join(middle, ", ") + " FROM " + table + where + " GROUP BY " + ordinals(len(keys)+1)
	return "SELECT " + strings.Join(outer, ", ") + " FROM (" + groups + ") dp_groups" +
		" WHERE dp_group_rank <= " + strconv.Itoa(a.plan.Contribution.MaxGroups) +
		" GROUP BY " + strings.Join(kAlias, ", ")
}

// keyAlias is the name of the i-th group key in the inner rows of a
// unit-column plan; keyAliases the first n of them.
func keyAlias(i int) string { return "dp_k" + strconv.Itoa(i) }

// argAlias is the name of the i-th aggregate argument in unitRows.
func argAlias(i int) string { return "dp_a" + strconv.Itoa(i) }

func keyAliases(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = keyAlias(i)
	}
	return out
}

// ordinals is "1, 2, ..., n": GROUP BY the first n select-list items, so a
// key expression is written once.
func ordinals(n int) string {
	o := make([]string, n)
	for i := range o {
		o[i] = strconv.Itoa(i + 1)
	}
	return strings.Join(o, ", ")
}
