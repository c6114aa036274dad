package eval

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dpproxy/dpproxy/parser"
)

// Table is a small in-memory relation: a catalog table (information_schema,
// pg_catalog) the proxy builds from metadata. Rows hold values of the kinds
// Eval understands, in the order of Columns.
type Table struct {
	Name    string
	Columns []string
	Rows    [][]any
}

// Select evaluates sel over t: WHERE, the select list (with * and t.*),
// GROUP BY with COUNT/SUM/AVG/MIN/MAX (also without GROUP BY), HAVING,
// DISTINCT, ORDER BY (expression, alias or position) and LIMIT/OFFSET.
// sel.From is nil (SELECT without FROM; t is ignored) or a single
// *parser.TableName the caller has resolved to t. outer answers variables,
// parameters and session functions; it may be nil.
//
// Select is for catalog tables and constant queries only, never for private
// data: it computes exact aggregates. As MySQL without ONLY_FULL_GROUP_BY, a
// non-aggregated column in a grouped query takes the group's first row.
// Columns are named by the alias, else by the column's name for a plain
// column reference (MySQL prints "a" for t.a), else by the item's text.
func Select(sel *parser.Select, t *Table, outer Env) (cols []string, rows [][]any, err error) {
	if outer == nil {
		outer = noEnv{}
	}
	s, err := newScope(sel, t, outer)
	if err != nil {
		return nil, nil, err
	}
	items, err := s.expand(sel.Items)
	if err != nil {
		return nil, nil, err
	}
	for _, it := range items {
		cols = append(cols, it.name)
	}
	units, err := s.units(sel, items)
	if err != nil {
		return nil, nil, err
	}
	out, err := s.project(sel, items, units)
	if err != nil {
		return nil, nil, err
	}
	if sel.Distinct {
		out = s.distinct(out)
	}
	s.sort(sel.OrderBy, out)
	if out, err = s.limit(sel.Limit, out); err != nil {
		return nil, nil, err
	}
	rows = make([][]any, len(out))
	for i, r := range out {
		rows[i] = r.vals
	}
	return cols, rows, nil
}

// scope is what one Select resolves names against.
type scope struct {
	table  *Table
	quals  []string // names a column may be qualified with
	hasFrm bool
	outer  Env
	coll   Collation
}

func newScope(sel *parser.Select, t *Table, outer Env) (*scope, error) {
	s := &scope{outer: outer, coll: collationOf(outer)}
	switch from := sel.From.(type) {
	case nil:
		// SELECT without FROM runs over one row of no columns (MySQL's DUAL).
		s.table = &Table{Rows: [][]any{{}}}
	case *parser.TableName:
		if t == nil {
			return nil, fmt.Errorf("eval: no rows given for table %s", from.Name)
		}
		s.table, s.hasFrm = t, true
		s.quals = []string{from.Name, t.Name}
		if from.Alias != "" {
			s.quals = []string{from.Alias} // an alias hides the table's name, as in SQL
		}
	default:
		return nil, unsupported("joins and derived tables in catalog queries")
	}
	return s, nil
}

// column finds ref among the table's columns (names are case-insensitive).
func (s *scope) column(ref *parser.ColumnRef) (int, error) {
	if ref.Table != "" && !s.qualifies(ref.Table) {
		return 0, fmt.Errorf("eval: unknown column %s (no table %s in FROM)", columnName(ref), ref.Table)
	}
	for i, c := range s.table.Columns {
		if strings.EqualFold(c, ref.Name) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("eval: unknown column %s", columnName(ref))
}

func (s *scope) qualifies(name string) bool {
	for _, q := range s.quals {
		if strings.EqualFold(q, name) {
			return true
		}
	}
	return false
}

// item is one output column after * expansion.
type item struct {
	name  string
	alias string
	expr  parser.Expr
}

func (s *scope) expand(sel []parser.SelectItem) ([]item, error) {
	var items []item
	for _, si := range sel {
		if !si.Star {
			items = append(items, item{name: itemName(si), alias: si.Alias, expr: si.Expr})
			continue
		}
		if !s.hasFrm {
			return nil, fmt.Errorf("eval: SELECT * needs a FROM clause")
		}
		if si.StarTable != "" && !s.qualifies(si.StarTable) {
			return nil, fmt.Errorf("eval: unknown table %s in %s.*", si.StarTable, si.StarTable)
		}
		for _, c := range s.table.Columns {
			items = append(items, item{name: c, expr: &parser.ColumnRef{Name: c}})
		}
	}
	return items, nil
}

func itemName(si parser.SelectItem) string {
	if si.Alias != "" || si.DefaultName != "" || si.Text != "" {
		return si.ColumnName()
	}
	if ref, ok := si.Expr.(*parser.ColumnRef); ok {
		return ref.Name
	}
	if l, ok := si.Expr.(*parser.Literal); ok {
		if l.Text != "" {
			return l.Text
		}
		return ToString(l.Value)
	}
	if f, ok := si.Expr.(*parser.Func); ok {
		return strings.ToUpper(f.Name) + "()"
	}
	return "?"
}

// unit is what one output row is computed from: a row, or a group of rows
// (row is then the group's first, nil for an empty group).
type unit struct {
	row   []any
	group [][]any
}

// units applies WHERE and then GROUP BY. A query with aggregates but no
// GROUP BY is one group, even over no rows (COUNT(*) is then 0).
func (s *scope) units(sel *parser.Select, items []item) ([]unit, error) {
	var kept [][]any
	for _, r := range s.table.Rows {
		if sel.Where != nil {
			v, err := s.evalRow(sel.Where, r)
			if err != nil {
				return nil, fmt.Errorf("eval: WHERE: %w", err)
			}
			if t, null := Truthy(v); !t || null {
				continue
			}
		}
		kept = append(kept, r)
	}
	if len(sel.GroupBy) == 0 && !s.aggregated(sel, items) {
		us := make([]unit, len(kept))
		for i, r := range kept {
			us[i] = unit{row: r}
		}
		return us, nil
	}
	if len(sel.GroupBy) == 0 {
		u := unit{group: kept}
		if len(kept) > 0 {
			u.row = kept[0]
		}
		return []unit{u}, nil
	}
	keys := make([]parser.Expr, len(sel.GroupBy))
	for i, g := range sel.GroupBy {
		e, _, err := s.resolveKey(g, items, "group statement")
		if err != nil {
			return nil, err
		}
		keys[i] = e
	}
	var us []unit
	index := map[string]int{}
	for _, r := range kept {
		var k strings.Builder
		for _, e := range keys {
			v, err := s.evalRow(e, r)
			if err != nil {
				return nil, fmt.Errorf("eval: GROUP BY: %w", err)
			}
			k.WriteString(s.coll.key(v))
			k.WriteByte(0)
		}
		i, ok := index[k.String()]
		if !ok {
			i = len(us)
			index[k.String()] = i
			us = append(us, unit{row: r})
		}
		us[i].group = append(us[i].group, r)
	}
	return us, nil
}

func (s *scope) aggregated(sel *parser.Select, items []item) bool {
	for _, it := range items {
		if hasAggregate(it.expr) {
			return true
		}
	}
	for _, o := range sel.OrderBy {
		if hasAggregate(o.Expr) {
			return true
		}
	}
	return hasAggregate(sel.Having)
}

// resolveKey maps a GROUP BY or ORDER BY key that is a position (1-based
// integer literal) or an output alias to the item it names; pos is the
// 0-based position or -1. A plain column of the table wins over an alias in
// GROUP BY as in MySQL; for ORDER BY aliases are resolved later, when
// evaluating with the row's outputs in scope.
func (s *scope) resolveKey(e parser.Expr, items []item, clause string) (parser.Expr, int, error) {
	if l, ok := e.(*parser.Literal); ok {
		if n, isInt := l.Value.(int64); isInt {
			if n < 1 || n > int64(len(items)) {
				return nil, 0, fmt.Errorf("eval: unknown column '%d' in '%s'", n, clause)
			}
			return items[n-1].expr, int(n - 1), nil
		}
	}
	if ref, ok := e.(*parser.ColumnRef); ok && ref.Table == "" {
		if _, err := s.column(ref); err != nil {
			for i, it := range items {
				if it.alias != "" && strings.EqualFold(it.alias, ref.Name) {
					return it.expr, i, nil
				}
			}
		}
	}
	return e, -1, nil
}

// outRow is one output row with its ORDER BY keys.
type outRow struct {
	vals []any
	keys []any
}

// project computes the select list, HAVING and ORDER BY keys of each unit.
func (s *scope) project(sel *parser.Select, items []item, units []unit) ([]outRow, error) {
	grouped := len(sel.GroupBy) > 0 || s.aggregated(sel, items)
	var out []outRow
	for _, u := range units {
		env := &rowEnv{s: s, row: u.row, group: u.group, grouped: grouped}
		vals := make([]any, len(items))
		for i, it := range items {
			v, err := Eval(it.expr, env)
			if err != nil {
				return nil, fmt.Errorf("eval: column %s: %w", it.name, err)
			}
			vals[i] = v
		}
		// HAVING and ORDER BY see the select list's aliases first.
		env.aliases = map[string]any{}
		for i, it := range items {
			if it.alias != "" {
				env.aliases[strings.ToLower(it.alias)] = vals[i]
			}
		}
		if sel.Having != nil {
			v, err := Eval(sel.Having, env)
			if err != nil {
				return nil, fmt.Errorf("eval: HAVING: %w", err)
			}
			if t, null := Truthy(v); !t || null {
				continue
			}
		}
		keys := make([]any, len(sel.OrderBy))
		for k, o := range sel.OrderBy {
			_, pos, err := s.resolveKey(o.Expr, items, "order clause")
			if err != nil {
				return nil, err
			}
			if pos >= 0 {
				keys[k] = vals[pos]
				continue
			}
			if keys[k], err = Eval(o.Expr, env); err != nil {
				return nil, fmt.Errorf("eval: ORDER BY: %w", err)
			}
		}
		out = append(out, outRow{vals: vals, keys: keys})
	}
	return out, nil
}

// sort orders rows by their keys; NULLs come first ascending and last
// descending, as in MySQL. A key whose values mix numbers and strings sorts
// as strings (see Compare).
func (s *scope) sort(order []parser.OrderItem, rows []outRow) {
	for k := range order {
		col := make([]any, len(rows))
		for i, r := range rows {
			col[i] = r.keys[k]
		}
		for i, v := range unifyKinds(col) {
			rows[i].keys[k] = v
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		for k, o := range order {
			if c := s.coll.Compare(rows[i].keys[k], rows[j].keys[k]); c != 0 {
				return (c < 0) != o.Desc
			}
		}
		return false
	})
}

// distinct keeps the first of rows whose values are equal under the collation.
func (s *scope) distinct(rows []outRow) []outRow {
	seen := map[string]bool{}
	kept := rows[:0]
	for _, r := range rows {
		var k strings.Builder
		for _, v := range r.vals {
			k.WriteString(s.coll.key(v))
			k.WriteByte(0)
		}
		if !seen[k.String()] {
			seen[k.String()] = true
			kept = append(kept, r)
		}
	}
	return kept
}

func (s *scope) limit(l *parser.Limit, rows []outRow) ([]outRow, error) {
	if l == nil {
		return rows, nil
	}
	bound := func(e parser.Expr, what string) (int64, error) {
		v, err := Eval(e, s.outer)
		if err != nil {
			return 0, fmt.Errorf("eval: LIMIT %s: %w", what, err)
		}
		n, ok := ToInt(v)
		if !ok || n < 0 {
			return 0, fmt.Errorf("eval: LIMIT %s must be a non-negative integer, not %s", what, ToString(v))
		}
		return n, nil
	}
	if l.Offset != nil {
		off, err := bound(l.Offset, "offset")
		if err != nil {
			return nil, err
		}
		rows = rows[min(off, int64(len(rows))):]
	}
	if l.Count != nil {
		n, err := bound(l.Count, "count")
		if err != nil {
			return nil, err
		}
		rows = rows[:min(n, int64(len(rows)))]
	}
	return rows, nil
}

// evalRow evaluates e over one row, where aggregates are not allowed.
func (s *scope) evalRow(e parser.Expr, row []any) (any, error) {
	return Eval(e, &rowEnv{s: s, row: row})
}
