package rewrite

import (
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/parser"
)

// CatalogHooks is what the catalog renderer asks its caller: which
// relations and functions exist and how they are spelled in the SQLite
// database that emulates a catalog. The renderer decides SQL syntax only; a
// hook that returns an error refuses the query.
type CatalogHooks struct {
	// Relation renders a relation named in FROM: a table name or a
	// parenthesised SELECT. The renderer adds the alias.
	Relation func(t *parser.TableName) (string, error)
	// Func renders a call of a function, aggregate or window function
	// (the renderer adds OVER (...)) from its rendered arguments. Pattern
	// matches arrive as calls of PostgreSQL's functions behind the
	// operators: textregexeq (~), texticregexeq (~*), and textlike (LIKE)
	// and texticlike (ILIKE) with the escape as a third argument (NULL
	// for PostgreSQL's default, a backslash).
	Func func(f *parser.Func, args []string) (string, error)
	// Cast renders x::type from the rendered operand.
	Cast func(c *parser.Cast, x string) (string, error)
	// FuncTable renders a set-returning function in FROM as a SELECT whose
	// one column is called column.
	FuncTable func(f *parser.Func, args []string, column string) (string, error)
	// Params are the values of $1, $2, ... (inlined as literals).
	Params []any
}

// RenderCatalogSQL renders a catalog query (a SELECT or a set operation of
// them) in SQLite's dialect, string literals inline. Arrays are JSON arrays
// (ARRAY[...] is json_array, = ANY (a) reads json_each(a)); every unaliased
// select item is named as PostgreSQL names it, so that outer queries can
// refer to the columns of derived tables.
func RenderCatalogSQL(stmt parser.Statement, h CatalogHooks) (string, error) {
	c := &catalogRenderer{h: h}
	c.r = &renderer{dialect: parser.SQLite, params: h.Params, extend: c.expr}
	c.r.column = func(ref *parser.ColumnRef) (string, error) {
		if ref.Table != "" {
			return c.r.ident(ref.Table) + "." + c.r.ident(ref.Name), nil
		}
		return c.r.ident(ref.Name), nil
	}
	return c.stmt(stmt)
}

type catalogRenderer struct {
	r *renderer
	h CatalogHooks
	n int // counter for generated names
}

func (c *catalogRenderer) stmt(s parser.Statement) (string, error) {
	switch s := s.(type) {
	case *parser.Select:
		return c.selectSQL(s)
	case *parser.SetOp:
		return c.setOp(s)
	}
	return "", unsupported("%T in a catalog query", s)
}

// member renders one side of a set operation. SQLite allows ORDER BY and
// LIMIT only on the whole compound, so a side that has them is wrapped.
func (c *catalogRenderer) member(s parser.Statement) (string, error) {
	sql, err := c.stmt(s)
	if err != nil {
		return "", err
	}
	if sel, ok := s.(*parser.Select); ok && (len(sel.OrderBy) > 0 || sel.Limit != nil) {
		return "SELECT * FROM (" + sql + ")", nil
	}
	if _, ok := s.(*parser.SetOp); ok {
		return "SELECT * FROM (" + sql + ")", nil
	}
	return sql, nil
}

func (c *catalogRenderer) setOp(s *parser.SetOp) (string, error) {
	l, err := c.member(s.Left)
	if err != nil {
		return "", err
	}
	r, err := c.member(s.Right)
	if err != nil {
		return "", err
	}
	op := strings.ToUpper(s.Op)
	if op == "INTERSECT ALL" || op == "EXCEPT ALL" {
		return "", unsupported("%s", s.Op)
	}
	out := l + " " + op + " " + r
	tail, err := c.orderLimit(s.OrderBy, s.Limit)
	if err != nil {
		return "", err
	}
	return out + tail, nil
}

func (c *catalogRenderer) selectSQL(sel *parser.Select) (string, error) {
	if sel.ForUpdate {
		return "", refuse("SELECT ... FOR UPDATE is not allowed on the catalog")
	}
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
			b.WriteString(c.r.ident(it.StarTable) + ".*")
		case it.Star:
			b.WriteString("*")
		default:
			s, err := c.r.expr(it.Expr)
			if err != nil {
				return "", err
			}
			b.WriteString(s + " AS " + c.r.ident(CatalogColumnName(it)))
		}
	}
	if sel.From != nil {
		from, err := c.from(sel.From)
		if err != nil {
			return "", err
		}
		b.WriteString(" FROM " + from)
	}
	if sel.Where != nil {
		s, err := c.r.expr(sel.Where)
		if err != nil {
			return "", err
		}
		b.WriteString(" WHERE " + s)
	}
	if len(sel.GroupBy) > 0 {
		parts, err := c.exprs(sel.GroupBy)
		if err != nil {
			return "", err
		}
		b.WriteString(" GROUP BY " + strings.Join(parts, ", "))
	}
	if sel.Having != nil {
		s, err := c.r.expr(sel.Having)
		if err != nil {
			return "", err
		}
		b.WriteString(" HAVING " + s)
	}
	tail, err := c.orderLimit(sel.OrderBy, sel.Limit)
	if err != nil {
		return "", err
	}
	return b.String() + tail, nil
}

// CatalogColumnName is the name PostgreSQL gives a select item: its alias,
// else the name FigureColname would give it.
func CatalogColumnName(it parser.SelectItem) string {
	switch {
	case it.Alias != "":
		return it.Alias
	case it.DefaultName != "":
		return it.DefaultName
	}
	return "?column?"
}

func (c *catalogRenderer) exprs(list []parser.Expr) ([]string, error) {
	out := make([]string, len(list))
	for i, e := range list {
		s, err := c.r.expr(e)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// orderKeys renders ORDER BY keys. PostgreSQL sorts NULL as larger than
// every value (NULLS LAST ascending, NULLS FIRST descending); SQLite as
// smaller, so the placement is always written out.
func (c *catalogRenderer) orderKeys(items []parser.OrderItem) (string, error) {
	parts := make([]string, len(items))
	for i, o := range items {
		s, err := c.r.expr(o.Expr)
		if err != nil {
			return "", err
		}
		nulls := o.Nulls
		if nulls == "" {
			nulls = "last"
			if o.Desc {
				nulls = "first"
			}
		}
		if o.Desc {
			s += " DESC"
		}
		parts[i] = s + " NULLS " + strings.ToUpper(nulls)
	}
	return strings.Join(parts, ", "), nil
}

func (c *catalogRenderer) orderLimit(order []parser.OrderItem, l *parser.Limit) (string, error) {
	var b strings.Builder
	if len(order) > 0 {
		keys, err := c.orderKeys(order)
		if err != nil {
			return "", err
		}
		b.WriteString(" ORDER BY " + keys)
	}
	if l != nil {
		count := "-1" // SQLite has no OFFSET without LIMIT; -1 is no limit
		if l.Count != nil {
			s, err := c.r.expr(l.Count)
			if err != nil {
				return "", err
			}
			count = s
		}
		b.WriteString(" LIMIT " + count)
		if l.Offset != nil {
			s, err := c.r.expr(l.Offset)
			if err != nil {
				return "", err
			}
			b.WriteString(" OFFSET " + s)
		}
	}
	return b.String(), nil
}

var catalogJoins = map[string]string{"inner": "JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "cross": "CROSS JOIN", "full": "FULL JOIN"}

func (c *catalogRenderer) from(te parser.TableExpr) (string, error) {
	switch t := te.(type) {
	case *parser.TableName:
		rel, err := c.h.Relation(t)
		if err != nil {
			return "", err
		}
		alias := t.Alias
		if alias == "" {
			alias = t.Name
		}
		return rel + " AS " + c.r.ident(alias), nil
	case *parser.Join:
		l, err := c.from(t.Left)
		if err != nil {
			return "", err
		}
		rt, err := c.from(t.Right)
		if err != nil {
			return "", err
		}
		kind, ok := catalogJoins[t.Kind]
		if !ok {
			return "", unsupported("%s join", t.Kind)
		}
		s := l + " " + kind + " " + rt
		if t.On != nil {
			on, err := c.r.expr(t.On)
			if err != nil {
				return "", err
			}
			s += " ON " + on
		}
		if len(t.Using) > 0 {
			cols := make([]string, len(t.Using))
			for i, u := range t.Using {
				cols[i] = c.r.ident(u)
			}
			s += " USING (" + strings.Join(cols, ", ") + ")"
		}
		return s, nil
	case *parser.DerivedTable:
		s, err := c.stmt(t.Select)
		if err != nil {
			return "", err
		}
		return "(" + s + ") AS " + c.r.ident(c.alias(t.Alias)), nil
	case *parser.FuncTable:
		args, err := c.exprs(t.Func.Args)
		if err != nil {
			return "", err
		}
		column := t.Func.Name
		switch {
		case len(t.Columns) > 0:
			column = t.Columns[0]
		case t.Alias != "":
			column = t.Alias
		}
		s, err := c.h.FuncTable(t.Func, args, column)
		if err != nil {
			return "", err
		}
		alias := t.Alias
		if alias == "" {
			alias = t.Func.Name
		}
		return "(" + s + ") AS " + c.r.ident(alias), nil
	}
	return "", unsupported("FROM clause %T", te)
}

func (c *catalogRenderer) alias(a string) string {
	if a != "" {
		return a
	}
	c.n++
	return "dp_derived_" + strconv.Itoa(c.n)
}

// expr renders the constructs the shared renderer does not know or
// refuses in DP queries; everything else falls through to it.
func (c *catalogRenderer) expr(e parser.Expr) (string, bool, error) {
	switch e := e.(type) {
	case *parser.Func:
		s, err := c.call(e)
		return s, true, err
	case *parser.Cast:
		x, err := c.r.expr(e.X)
		if err != nil {
			return "", true, err
		}
		s, err := c.h.Cast(e, x)
		return s, true, err
	case *parser.Binary:
		if e.Op != parser.OpRegex && e.Op != parser.OpIRegex {
			return "", false, nil
		}
		name := "textregexeq"
		if e.Op == parser.OpIRegex {
			name = "texticregexeq"
		}
		args, err := c.exprs([]parser.Expr{e.L, e.R})
		if err != nil {
			return "", true, err
		}
		s, err := c.h.Func(&parser.Func{Schema: "pg_catalog", Name: name, Args: []parser.Expr{e.L, e.R}}, args)
		return s, true, err
	case *parser.Like:
		s, err := c.like(e)
		return s, true, err
	case *parser.Subquery:
		s, err := c.stmt(e.Select)
		if err != nil {
			return "", true, err
		}
		if e.Exists {
			return "EXISTS (" + s + ")", true, nil
		}
		return "(" + s + ")", true, nil
	case *parser.In:
		if e.Sub == nil {
			return "", false, nil
		}
		x, err := c.r.expr(e.X)
		if err != nil {
			return "", true, err
		}
		s, err := c.stmt(e.Sub)
		if err != nil {
			return "", true, err
		}
		not := ""
		if e.Not {
			not = "NOT "
		}
		return "(" + x + " " + not + "IN (" + s + "))", true, nil
	case *parser.Array:
		items, err := c.exprs(e.Items)
		if err != nil {
			return "", true, err
		}
		return "json_array(" + strings.Join(items, ", ") + ")", true, nil
	case *parser.ArraySubquery:
		s, err := c.arraySubquery(e)
		return s, true, err
	case *parser.AnyOp:
		s, err := c.anyOp(e)
		return s, true, err
	case *parser.Subscript:
		x, err := c.r.expr(e.X)
		if err != nil {
			return "", true, err
		}
		i, err := c.r.expr(e.Index)
		if err != nil {
			return "", true, err
		}
		// PostgreSQL's arrays count from 1, JSON paths from 0.
		return "json_extract(" + x + ", '$[' || ((" + i + ") - 1) || ']')", true, nil
	case *parser.FieldSelect:
		x, err := c.r.expr(e.X)
		if err != nil {
			return "", true, err
		}
		return "json_extract(" + x + ", " + c.r.stringLiteral("$."+e.Field) + ")", true, nil
	case *parser.Variable:
		return "", true, refuse("variables are not allowed in a catalog query")
	case *parser.Row, *parser.Interval:
		return "", true, unsupported("%T in a catalog query", e)
	}
	return "", false, nil
}

func (c *catalogRenderer) call(f *parser.Func) (string, error) {
	if len(f.WithinGroup) > 0 {
		return "", unsupported("ORDER BY inside %s()", f.Name)
	}
	args, err := c.exprs(f.Args)
	if err != nil {
		return "", err
	}
	s, err := c.h.Func(f, args)
	if err != nil || !f.Over {
		return s, err
	}
	var over []string
	if f.Window != nil {
		if len(f.Window.PartitionBy) > 0 {
			parts, err := c.exprs(f.Window.PartitionBy)
			if err != nil {
				return "", err
			}
			over = append(over, "PARTITION BY "+strings.Join(parts, ", "))
		}
		if len(f.Window.OrderBy) > 0 {
			keys, err := c.orderKeys(f.Window.OrderBy)
			if err != nil {
				return "", err
			}
			over = append(over, "ORDER BY "+keys)
		}
	}
	return s + " OVER (" + strings.Join(over, " ") + ")", nil
}

// arraySubquery renders ARRAY(SELECT x ...) as the JSON array of the
// subquery's one column, in the subquery's order.
func (c *catalogRenderer) arraySubquery(e *parser.ArraySubquery) (string, error) {
	sel, ok := e.Select.(*parser.Select)
	if !ok || len(sel.Items) != 1 || sel.Items[0].Star {
		return "", unsupported("ARRAY() of a subquery that is not a one-column SELECT")
	}
	inner := *sel
	inner.Items = []parser.SelectItem{sel.Items[0]}
	inner.Items[0].Alias = "dp_elem"
	s, err := c.selectSQL(&inner)
	if err != nil {
		return "", err
	}
	return "(SELECT json_group_array(\"dp_elem\") FROM (" + s + "))", nil
}

// anyOp renders x op ANY (array) as a search of the JSON array's elements;
// ALL holds when no element fails the comparison.
func (c *catalogRenderer) anyOp(e *parser.AnyOp) (string, error) {
	op, ok := binaryOps[e.Op]
	if !ok || e.Op == parser.OpAnd || e.Op == parser.OpOr {
		return "", unsupported("operator %s with ANY/ALL", e.Op)
	}
	x, err := c.r.expr(e.X)
	if err != nil {
		return "", err
	}
	arr, err := c.r.expr(e.Array)
	if err != nil {
		return "", err
	}
	cond := "(" + x + ") " + op + " \"dp_each\".value"
	if e.All {
		return "(NOT EXISTS (SELECT 1 FROM json_each(" + arr + ") AS \"dp_each\" WHERE NOT (" + cond + ")))", nil
	}
	return "(EXISTS (SELECT 1 FROM json_each(" + arr + ") AS \"dp_each\" WHERE " + cond + "))", nil
}

// like renders [NOT] LIKE / ILIKE as a call: SQLite's LIKE ignores case
// and has no default escape character, PostgreSQL's does not and has one.
func (c *catalogRenderer) like(e *parser.Like) (string, error) {
	operands := []parser.Expr{e.X, e.Pattern}
	if e.Escape != nil {
		operands = append(operands, e.Escape)
	}
	args, err := c.exprs(operands)
	if err != nil {
		return "", err
	}
	if e.Escape == nil {
		args = append(args, "NULL")
	}
	name := "textlike"
	if e.CaseInsensitive {
		name = "texticlike"
	}
	s, err := c.h.Func(&parser.Func{Schema: "pg_catalog", Name: name, Args: operands}, args)
	if err != nil || !e.Not {
		return s, err
	}
	return "(NOT " + s + ")", nil
}
