package parser

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// convertResultSet converts a query in FROM, IN (...), EXISTS (...) or a
// scalar subquery.
func convertResultSet(n ast.ResultSetNode) (Statement, error) {
	switch q := n.(type) {
	case *ast.SelectStmt:
		return convertSelect(q)
	case *ast.SetOprStmt:
		return convertSetOpr(q)
	}
	return nil, &UnsupportedError{What: "subquery of kind " + stmtName(n)}
}

func convertSelect(s *ast.SelectStmt) (*Select, error) {
	if s.With != nil {
		return convertWith(s)
	}
	switch {
	case s.Kind == ast.SelectStmtKindTable:
		return nil, &UnsupportedError{What: "TABLE statement"}
	case s.Kind == ast.SelectStmtKindValues:
		return nil, &UnsupportedError{What: "VALUES statement"}
	case s.SelectIntoOpt != nil:
		return nil, &UnsupportedError{What: "SELECT ... INTO"}
	case len(s.WindowSpecs) > 0:
		return nil, &UnsupportedError{What: "WINDOW clause"}
	case s.Fields == nil:
		return nil, &UnsupportedError{What: "SELECT without a select list"}
	}
	out := &Select{Distinct: s.Distinct}
	var err error
	if out.Items, err = convertFields(s.Fields); err != nil {
		return nil, err
	}
	if s.From != nil {
		if out.From, err = convertTableRef(s.From.TableRefs); err != nil {
			return nil, err
		}
	}
	if s.Where != nil {
		if out.Where, err = convertExpr(s.Where); err != nil {
			return nil, err
		}
	}
	if s.GroupBy != nil {
		if s.GroupBy.Rollup {
			return nil, &UnsupportedError{What: "GROUP BY ... WITH ROLLUP"}
		}
		out.GroupBy = make([]Expr, 0, len(s.GroupBy.Items))
		for _, item := range s.GroupBy.Items {
			e, err := convertExpr(item.Expr)
			if err != nil {
				return nil, err
			}
			out.GroupBy = append(out.GroupBy, e)
		}
	}
	if s.Having != nil {
		if out.Having, err = convertExpr(s.Having.Expr); err != nil {
			return nil, err
		}
	}
	if out.OrderBy, err = convertOrderBy(s.OrderBy); err != nil {
		return nil, err
	}
	if out.Limit, err = convertLimit(s.Limit); err != nil {
		return nil, err
	}
	out.ForUpdate = s.LockInfo != nil && s.LockInfo.LockType != ast.SelectLockNone
	return out, nil
}

func convertFields(fields *ast.FieldList) ([]SelectItem, error) {
	items := make([]SelectItem, 0, len(fields.Fields))
	for _, f := range fields.Fields {
		if f.WildCard != nil {
			if f.WildCard.Schema.O != "" {
				return nil, &UnsupportedError{What: "schema-qualified star (db.t.*)"}
			}
			item := SelectItem{Star: true, StarTable: f.WildCard.Table.O, Text: "*"}
			if item.StarTable != "" {
				item.Text = item.StarTable + ".*"
			}
			items = append(items, item)
			continue
		}
		e, err := convertExpr(f.Expr)
		if err != nil {
			return nil, err
		}
		// OriginalText is the field exactly as typed (TiDB trims the
		// surrounding blanks); MySQL names an unaliased column by it.
		items = append(items, SelectItem{Expr: e, Alias: f.AsName.O, Text: f.OriginalText()})
	}
	return items, nil
}

func convertOrderBy(o *ast.OrderByClause) ([]OrderItem, error) {
	if o == nil {
		return nil, nil
	}
	items := make([]OrderItem, 0, len(o.Items))
	for _, item := range o.Items {
		e, err := convertExpr(item.Expr)
		if err != nil {
			return nil, err
		}
		items = append(items, OrderItem{Expr: e, Desc: item.Desc})
	}
	return items, nil
}

func convertLimit(l *ast.Limit) (*Limit, error) {
	if l == nil {
		return nil, nil
	}
	out := &Limit{}
	var err error
	if l.Count != nil {
		if out.Count, err = convertExpr(l.Count); err != nil {
			return nil, err
		}
	}
	if l.Offset != nil {
		if out.Offset, err = convertExpr(l.Offset); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// convertTableRef converts what FROM names. TiDB represents a lone table as
// a Join without a right side, a comma list as cross joins, and every table
// or derived table as a TableSource carrying the alias.
func convertTableRef(n ast.ResultSetNode) (TableExpr, error) {
	switch t := n.(type) {
	case *ast.Join:
		return convertJoin(t)
	case *ast.TableSource:
		return convertTableSource(t)
	}
	return nil, &UnsupportedError{What: "FROM item of kind " + stmtName(n)}
}

func convertJoin(j *ast.Join) (TableExpr, error) {
	left, err := convertTableRef(j.Left)
	if err != nil {
		return nil, err
	}
	if j.Right == nil {
		return left, nil
	}
	if j.NaturalJoin {
		return nil, &UnsupportedError{What: "NATURAL JOIN"}
	}
	right, err := convertTableRef(j.Right)
	if err != nil {
		return nil, err
	}
	out := &Join{Left: left, Right: right}
	switch j.Tp {
	case ast.LeftJoin:
		out.Kind = "left"
	case ast.RightJoin:
		out.Kind = "right"
	default:
		// TiDB parses JOIN, INNER JOIN, CROSS JOIN, STRAIGHT_JOIN and the
		// comma as a cross join; with a condition MySQL makes it inner.
		out.Kind = "cross"
		if j.On != nil || len(j.Using) > 0 {
			out.Kind = "inner"
		}
	}
	if j.On != nil {
		if out.On, err = convertExpr(j.On.Expr); err != nil {
			return nil, err
		}
	}
	for _, c := range j.Using {
		out.Using = append(out.Using, c.Name.O)
	}
	return out, nil
}

func convertTableSource(ts *ast.TableSource) (TableExpr, error) {
	if ts.Lateral {
		return nil, &UnsupportedError{What: "LATERAL derived table"}
	}
	if len(ts.ColumnNames) > 0 {
		return nil, &UnsupportedError{What: "derived table column list"}
	}
	switch src := ts.Source.(type) {
	case *ast.TableName:
		switch {
		case src.AsOf != nil:
			return nil, &UnsupportedError{What: "AS OF TIMESTAMP"}
		case src.TableSample != nil:
			return nil, &UnsupportedError{What: "TABLESAMPLE"}
		case len(src.PartitionNames) > 0:
			return nil, &UnsupportedError{What: "PARTITION selection"}
		}
		// Index hints only steer the backend's plan and are dropped.
		return &TableName{Schema: src.Schema.O, Name: src.Name.O, Alias: ts.AsName.O}, nil
	case *ast.SelectStmt, *ast.SetOprStmt:
		q, err := convertResultSet(src)
		if err != nil {
			return nil, err
		}
		return &DerivedTable{Select: q, Alias: ts.AsName.O}, nil
	case *ast.Join:
		if ts.AsName.O != "" {
			return nil, &UnsupportedError{What: "alias on a parenthesised join"}
		}
		return convertJoin(src)
	}
	return nil, &UnsupportedError{What: "FROM item of kind " + stmtName(ts.Source)}
}

// convertWith converts WITH name AS (query) ... SELECT ...: each CTE is
// inlined where it is read, as a derived table (inlineCTEs).
func convertWith(s *ast.SelectStmt) (*Select, error) {
	with := s.With
	if with.IsRecursive {
		return nil, &UnsupportedError{What: "WITH RECURSIVE"}
	}
	ctes := map[string]Statement{}
	for _, cte := range with.CTEs {
		if len(cte.ColNameList) > 0 {
			return nil, &UnsupportedError{What: "column names after a WITH name (alias the columns inside its query)"}
		}
		q, err := convertResultSet(cte.Query.Query)
		if err != nil {
			return nil, err
		}
		inlineCTEs(q, ctes)
		ctes[cte.Name.L] = q
	}
	s.With = nil
	out, err := convertSelect(s)
	if err != nil {
		return nil, err
	}
	inlineCTEs(out, ctes)
	return out, nil
}
