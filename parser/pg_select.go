package parser

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

var pgSetOps = map[pg.SetOperation][2]string{
	pg.SetOperation_SETOP_UNION:     {"union", "union all"},
	pg.SetOperation_SETOP_INTERSECT: {"intersect", "intersect all"},
	pg.SetOperation_SETOP_EXCEPT:    {"except", "except all"},
}

// selectStmt converts a SELECT or a set operation. PostgreSQL's grammar has
// already built set operations into a tree with INTERSECT binding tighter
// and the rest associating left, and attached a trailing ORDER BY / LIMIT
// to the outermost node.
func (c *pgConverter) selectStmt(s *pg.SelectStmt) (Statement, error) {
	if s.WithClause != nil {
		return c.with(s)
	}
	switch {
	case len(s.ValuesLists) > 0:
		return nil, &UnsupportedError{What: "VALUES statement"}
	case s.IntoClause != nil:
		return nil, &UnsupportedError{What: "SELECT ... INTO"}
	}
	if s.Op != pg.SetOperation_SETOP_NONE {
		return c.setOp(s)
	}
	switch {
	case len(s.WindowClause) > 0:
		return nil, &UnsupportedError{What: "WINDOW clause"}
	case len(s.TargetList) == 0:
		return nil, &UnsupportedError{What: "SELECT without a select list"}
	case s.GroupDistinct:
		return nil, &UnsupportedError{What: "GROUP BY DISTINCT"}
	}
	out := &Select{}
	if len(s.DistinctClause) > 0 {
		// Plain DISTINCT is a list holding one empty node; DISTINCT ON
		// lists its expressions.
		if len(s.DistinctClause) > 1 || s.DistinctClause[0].GetNode() != nil {
			return nil, &UnsupportedError{What: "DISTINCT ON"}
		}
		out.Distinct = true
	}
	var err error
	if out.Items, err = c.targets(s.TargetList); err != nil {
		return nil, err
	}
	if out.From, err = c.fromList(s.FromClause); err != nil {
		return nil, err
	}
	if s.WhereClause != nil {
		if out.Where, err = c.expr(s.WhereClause); err != nil {
			return nil, err
		}
	}
	if len(s.GroupClause) > 0 {
		out.GroupBy = make([]Expr, 0, len(s.GroupClause))
		for _, g := range s.GroupClause {
			if g.GetGroupingSet() != nil {
				return nil, &UnsupportedError{What: "GROUP BY ROLLUP/CUBE/GROUPING SETS"}
			}
			e, err := c.expr(g)
			if err != nil {
				return nil, err
			}
			out.GroupBy = append(out.GroupBy, e)
		}
	}
	if s.HavingClause != nil {
		if out.Having, err = c.expr(s.HavingClause); err != nil {
			return nil, err
		}
	}
	if out.OrderBy, err = c.orderBy(s.SortClause); err != nil {
		return nil, err
	}
	if out.Limit, err = c.limit(s); err != nil {
		return nil, err
	}
	out.ForUpdate = len(s.LockingClause) > 0
	return out, nil
}

func (c *pgConverter) setOp(s *pg.SelectStmt) (Statement, error) {
	names, ok := pgSetOps[s.Op]
	if !ok || s.Larg == nil || s.Rarg == nil {
		return nil, &UnsupportedError{What: "set operation of kind " + s.Op.String()}
	}
	left, err := c.selectStmt(s.Larg)
	if err != nil {
		return nil, err
	}
	right, err := c.selectStmt(s.Rarg)
	if err != nil {
		return nil, err
	}
	out := &SetOp{Op: names[0], Left: left, Right: right}
	if s.All {
		out.Op = names[1]
	}
	if out.OrderBy, err = c.orderBy(s.SortClause); err != nil {
		return nil, err
	}
	if out.Limit, err = c.limit(s); err != nil {
		return nil, err
	}
	if len(s.LockingClause) > 0 {
		return nil, &UnsupportedError{What: "FOR UPDATE on a set operation"}
	}
	return out, nil
}

// targets converts the select list. Text is the item as typed (from its
// start offset to the token that ends it); DefaultName is the column name
// PostgreSQL would give it.
func (c *pgConverter) targets(list []*pg.Node) ([]SelectItem, error) {
	items := make([]SelectItem, 0, len(list))
	for _, n := range list {
		rt := n.GetResTarget()
		if rt == nil || rt.Val == nil {
			return nil, &UnsupportedError{What: "select item of kind " + pgNodeName(n)}
		}
		if len(rt.Indirection) > 0 {
			return nil, &UnsupportedError{What: "select item with indirection"}
		}
		if ref := rt.Val.GetColumnRef(); ref != nil && len(ref.Fields) > 0 && ref.Fields[len(ref.Fields)-1].GetAStar() != nil {
			item := SelectItem{Star: true, Text: "*"}
			switch len(ref.Fields) {
			case 1:
			case 2:
				item.StarTable = ref.Fields[0].GetString_().GetSval()
				item.Text = item.StarTable + ".*"
			default:
				return nil, &UnsupportedError{What: "schema-qualified star (db.t.*)"}
			}
			items = append(items, item)
			continue
		}
		e, err := c.expr(rt.Val)
		if err != nil {
			return nil, err
		}
		items = append(items, SelectItem{
			Expr:        e,
			Alias:       rt.Name,
			Text:        pgItemText(c.sql, int(rt.Location)),
			DefaultName: pgColumnName(rt.Val),
		})
	}
	return items, nil
}

func (c *pgConverter) orderBy(list []*pg.Node) ([]OrderItem, error) {
	if len(list) == 0 {
		return nil, nil
	}
	items := make([]OrderItem, 0, len(list))
	for _, n := range list {
		sb := n.GetSortBy()
		if sb == nil {
			return nil, &UnsupportedError{What: "ORDER BY item of kind " + pgNodeName(n)}
		}
		e, err := c.expr(sb.Node)
		if err != nil {
			return nil, err
		}
		item := OrderItem{Expr: e}
		switch sb.SortbyDir {
		case pg.SortByDir_SORTBY_DESC:
			item.Desc = true
		case pg.SortByDir_SORTBY_USING:
			return nil, &UnsupportedError{What: "ORDER BY ... USING"}
		}
		switch sb.SortbyNulls {
		case pg.SortByNulls_SORTBY_NULLS_FIRST:
			item.Nulls = "first"
		case pg.SortByNulls_SORTBY_NULLS_LAST:
			item.Nulls = "last"
		}
		items = append(items, item)
	}
	return items, nil
}

// limit converts LIMIT / OFFSET / FETCH FIRST n ROWS ONLY (the grammar
// gives all three the same fields). LIMIT ALL is a NULL count, which means
// no limit.
func (c *pgConverter) limit(s *pg.SelectStmt) (*Limit, error) {
	if s.LimitOption == pg.LimitOption_LIMIT_OPTION_WITH_TIES {
		return nil, &UnsupportedError{What: "FETCH ... WITH TIES"}
	}
	out := &Limit{}
	var err error
	if s.LimitCount != nil && !s.LimitCount.GetAConst().GetIsnull() {
		if out.Count, err = c.expr(s.LimitCount); err != nil {
			return nil, err
		}
	}
	if s.LimitOffset != nil {
		if out.Offset, err = c.expr(s.LimitOffset); err != nil {
			return nil, err
		}
	}
	if out.Count == nil && out.Offset == nil {
		return nil, nil
	}
	return out, nil
}

// fromList converts FROM a, b, c into left-deep cross joins, as MySQL's
// comma joins are.
func (c *pgConverter) fromList(list []*pg.Node) (TableExpr, error) {
	var out TableExpr
	for _, n := range list {
		t, err := c.fromItem(n)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = t
			continue
		}
		out = &Join{Kind: "cross", Left: out, Right: t}
	}
	return out, nil
}

func (c *pgConverter) fromItem(n *pg.Node) (TableExpr, error) {
	switch x := n.GetNode().(type) {
	case *pg.Node_RangeVar:
		return pgTableName(x.RangeVar)
	case *pg.Node_JoinExpr:
		return c.join(x.JoinExpr)
	case *pg.Node_RangeSubselect:
		r := x.RangeSubselect
		if r.Lateral {
			return nil, &UnsupportedError{What: "LATERAL derived table"}
		}
		alias, cols := pgAlias(r.Alias)
		if len(cols) > 0 {
			return nil, &UnsupportedError{What: "derived table column list"}
		}
		sel := r.Subquery.GetSelectStmt()
		if sel == nil {
			return nil, &UnsupportedError{What: "derived table of kind " + pgNodeName(r.Subquery)}
		}
		q, err := c.selectStmt(sel)
		if err != nil {
			return nil, err
		}
		return &DerivedTable{Select: q, Alias: alias}, nil
	case *pg.Node_RangeFunction:
		return c.funcTable(x.RangeFunction)
	case *pg.Node_RangeTableSample:
		return nil, &UnsupportedError{What: "TABLESAMPLE"}
	}
	return nil, &UnsupportedError{What: "FROM item of kind " + pgNodeName(n)}
}

func pgTableName(r *pg.RangeVar) (TableExpr, error) {
	switch {
	case r.Catalogname != "":
		return nil, &UnsupportedError{What: "database-qualified table name (db.schema.table)"}
	case !r.Inh:
		return nil, &UnsupportedError{What: "ONLY (inheritance)"}
	}
	alias, cols := pgAlias(r.Alias)
	if len(cols) > 0 {
		return nil, &UnsupportedError{What: "table alias column list"}
	}
	return &TableName{Schema: r.Schemaname, Name: r.Relname, Alias: alias}, nil
}

func pgAlias(a *pg.Alias) (string, []string) {
	if a == nil {
		return "", nil
	}
	var cols []string
	for _, n := range a.Colnames {
		cols = append(cols, n.GetString_().GetSval())
	}
	return a.Aliasname, cols
}

func (c *pgConverter) join(j *pg.JoinExpr) (TableExpr, error) {
	switch {
	case j.IsNatural:
		return nil, &UnsupportedError{What: "NATURAL JOIN"}
	case j.Alias != nil:
		return nil, &UnsupportedError{What: "alias on a parenthesised join"}
	case j.JoinUsingAlias != nil:
		return nil, &UnsupportedError{What: "JOIN ... USING (...) AS alias"}
	}
	left, err := c.fromItem(j.Larg)
	if err != nil {
		return nil, err
	}
	right, err := c.fromItem(j.Rarg)
	if err != nil {
		return nil, err
	}
	out := &Join{Left: left, Right: right}
	switch j.Jointype {
	case pg.JoinType_JOIN_INNER:
		// CROSS JOIN is an inner join without a condition.
		out.Kind = "cross"
		if j.Quals != nil || len(j.UsingClause) > 0 {
			out.Kind = "inner"
		}
	case pg.JoinType_JOIN_LEFT:
		out.Kind = "left"
	case pg.JoinType_JOIN_RIGHT:
		out.Kind = "right"
	case pg.JoinType_JOIN_FULL:
		out.Kind = "full"
	default:
		return nil, &UnsupportedError{What: "join of kind " + j.Jointype.String()}
	}
	if j.Quals != nil {
		if out.On, err = c.expr(j.Quals); err != nil {
			return nil, err
		}
	}
	for _, n := range j.UsingClause {
		out.Using = append(out.Using, n.GetString_().GetSval())
	}
	return out, nil
}

// funcTable converts a set-returning function in FROM: generate_series(1,
// n) AS s(r), unnest(a) x.
func (c *pgConverter) funcTable(r *pg.RangeFunction) (TableExpr, error) {
	switch {
	case r.Lateral:
		return nil, &UnsupportedError{What: "LATERAL function"}
	case r.Ordinality:
		return nil, &UnsupportedError{What: "WITH ORDINALITY"}
	case r.IsRowsfrom || len(r.Functions) != 1:
		return nil, &UnsupportedError{What: "ROWS FROM"}
	case len(r.Coldeflist) > 0:
		return nil, &UnsupportedError{What: "column definition list of a function in FROM"}
	}
	// Each function is a two-item list: the call and its column
	// definitions (nil unless ROWS FROM gives them).
	pair := r.Functions[0].GetList().GetItems()
	if len(pair) == 0 || (len(pair) > 1 && pair[1].GetNode() != nil) {
		return nil, &UnsupportedError{What: "column definition list of a function in FROM"}
	}
	e, err := c.expr(pair[0])
	if err != nil {
		return nil, err
	}
	f, ok := e.(*Func)
	if !ok {
		return nil, &UnsupportedError{What: "FROM item that is an expression of kind " + pgNodeName(pair[0])}
	}
	alias, cols := pgAlias(r.Alias)
	return &FuncTable{Func: f, Alias: alias, Columns: cols}, nil
}

// with converts WITH name AS (query) ... SELECT ...: each CTE is inlined
// where it is read, as a derived table (inlineCTEs).
func (c *pgConverter) with(s *pg.SelectStmt) (Statement, error) {
	w := s.WithClause
	if w.Recursive {
		return nil, &UnsupportedError{What: "WITH RECURSIVE"}
	}
	ctes := map[string]Statement{}
	for _, n := range w.Ctes {
		cte := n.GetCommonTableExpr()
		if cte == nil {
			return nil, &UnsupportedError{What: "this WITH clause"}
		}
		if len(cte.Aliascolnames) > 0 {
			return nil, &UnsupportedError{What: "column names after a WITH name (alias the columns inside its query)"}
		}
		sel := cte.Ctequery.GetSelectStmt()
		if sel == nil {
			return nil, &UnsupportedError{What: "a WITH query that is not a SELECT"}
		}
		q, err := c.selectStmt(sel)
		if err != nil {
			return nil, err
		}
		inlineCTEs(q, ctes)
		ctes[strings.ToLower(cte.Ctename)] = q
	}
	s.WithClause = nil
	out, err := c.selectStmt(s)
	if err != nil {
		return nil, err
	}
	inlineCTEs(out, ctes)
	return out, nil
}
