package rewrite

import (
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/parser"
)

// publicAggregates may run in the backend over public tables, whose rows
// anyone may read.
var publicAggregates = map[string]bool{"count": true, "sum": true, "avg": true, "min": true, "max": true}

// Public renders a SELECT that reads only public tables in the backend's
// dialect. The caller has checked that every table it reads is public.
func Public(sel *parser.Select, d parser.Dialect, params []any) (string, error) {
	r := &renderer{dialect: d, params: params, aggregates: publicAggregates}
	r.column = func(ref *parser.ColumnRef) (string, error) {
		if ref.Table != "" {
			return r.ident(ref.Table) + "." + r.ident(ref.Name), nil
		}
		return r.ident(ref.Name), nil
	}
	return r.selectSQL(sel)
}

func (r *renderer) selectSQL(sel *parser.Select) (string, error) {
	var b strings.Builder
	b.WriteString("SELECT ")
	if sel.Distinct {
		b.WriteString("DISTINCT ")
	}
	for i, it := range sel.Items {
		if i > 0 {
			b.WriteString(", ")
		}
		switch {
		case it.Star && it.StarTable != "":
			b.WriteString(r.ident(it.StarTable) + ".*")
		case it.Star:
			b.WriteString("*")
		default:
			s, err := r.expr(it.Expr)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
			// Named as the client's server would name it, whatever the
			// backend (MariaDB keeps `t`.`c` as the column's name, not
			// its text; PostgreSQL calls COUNT(*) "count").
			if name := it.ColumnName(); name != "" {
				b.WriteString(" AS " + r.ident(name))
			}
		}
	}
	if sel.From != nil {
		from, err := r.from(sel.From)
		if err != nil {
			return "", err
		}
		b.WriteString(" FROM " + from)
	}
	if sel.Where != nil {
		s, err := r.expr(sel.Where)
		if err != nil {
			return "", err
		}
		b.WriteString(" WHERE " + s)
	}
	if len(sel.GroupBy) > 0 {
		parts := make([]string, len(sel.GroupBy))
		for i, g := range sel.GroupBy {
			s, err := r.expr(g)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		b.WriteString(" GROUP BY " + strings.Join(parts, ", "))
	}
	if sel.Having != nil {
		s, err := r.expr(sel.Having)
		if err != nil {
			return "", err
		}
		b.WriteString(" HAVING " + s)
	}
	if len(sel.OrderBy) > 0 {
		parts := make([]string, len(sel.OrderBy))
		for i, o := range sel.OrderBy {
			s, err := r.expr(o.Expr)
			if err != nil {
				return "", err
			}
			if o.Desc {
				s += " DESC"
			}
			parts[i] = s
		}
		b.WriteString(" ORDER BY " + strings.Join(parts, ", "))
	}
	if l := sel.Limit; l != nil {
		if l.Count != nil {
			s, err := r.expr(l.Count)
			if err != nil {
				return "", err
			}
			b.WriteString(" LIMIT " + s)
		}
		if l.Offset != nil {
			s, err := r.expr(l.Offset)
			if err != nil {
				return "", err
			}
			b.WriteString(" OFFSET " + s)
		}
	}
	return b.String(), nil
}

func (r *renderer) from(te parser.TableExpr) (string, error) {
	switch t := te.(type) {
	case *parser.TableName:
		s := r.ident(t.Name)
		if t.Alias != "" {
			s += " AS " + r.ident(t.Alias)
		}
		return s, nil
	case *parser.Join:
		l, err := r.from(t.Left)
		if err != nil {
			return "", err
		}
		rt, err := r.from(t.Right)
		if err != nil {
			return "", err
		}
		kind := map[string]string{"inner": "JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "cross": "CROSS JOIN", "full": "FULL JOIN"}[t.Kind]
		if kind == "" {
			return "", unsupported("%s join", t.Kind)
		}
		s := "(" + l + " " + kind + " " + rt
		if t.On != nil {
			on, err := r.expr(t.On)
			if err != nil {
				return "", err
			}
			s += " ON " + on
		}
		if len(t.Using) > 0 {
			cols := make([]string, len(t.Using))
			for i, c := range t.Using {
				cols[i] = r.ident(c)
			}
			s += " USING (" + strings.Join(cols, ", ") + ")"
		}
		return s + ")", nil
	case *parser.DerivedTable:
		sel, ok := t.Select.(*parser.Select)
		if !ok {
			return "", unsupported("set operations in a derived table")
		}
		s, err := r.selectSQL(sel)
		if err != nil {
			return "", err
		}
		alias := t.Alias
		if alias == "" {
			r.derived++
			alias = "dp_derived_" + strconv.Itoa(r.derived)
		}
		return "(" + s + ") AS " + r.ident(alias), nil
	}
	return "", unsupported("FROM clause %T", te)
}
