package parser

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
)

var mysqlSetOps = map[ast.SetOprType]string{
	ast.Union:        "union",
	ast.UnionAll:     "union all",
	ast.Intersect:    "intersect",
	ast.IntersectAll: "intersect all",
	ast.Except:       "except",
	ast.ExceptAll:    "except all",
}

func convertSetOpr(s *ast.SetOprStmt) (Statement, error) {
	if s.With != nil {
		return nil, &UnsupportedError{What: "WITH (common table expressions)"}
	}
	return convertSetOprList(s.SelectList, s.OrderBy, s.Limit)
}

// convertSetOprList folds TiDB's flat list of operands, each tagged with the
// operator before it, into a binary tree. INTERSECT binds tighter than UNION
// and EXCEPT, which associate to the left (MySQL 8.0.31 reference manual,
// 15.2.14 "Set Operations").
func convertSetOprList(list *ast.SetOprSelectList, orderBy *ast.OrderByClause, limit *ast.Limit) (Statement, error) {
	if list.With != nil {
		return nil, &UnsupportedError{What: "WITH (common table expressions)"}
	}
	var terms []Statement // operands of UNION/EXCEPT, INTERSECTs already folded
	var ops []string      // ops[i] joins terms[i] and terms[i+1]
	for i, node := range list.Selects {
		operand, after, err := convertSetOperand(node)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			terms = append(terms, operand)
			continue
		}
		if after == nil {
			return nil, &UnsupportedError{What: "set operation without an operator"}
		}
		op := mysqlSetOps[*after]
		if *after == ast.Intersect || *after == ast.IntersectAll {
			last := len(terms) - 1
			terms[last] = &SetOp{Op: op, Left: terms[last], Right: operand}
			continue
		}
		ops = append(ops, op)
		terms = append(terms, operand)
	}
	if len(terms) == 0 {
		return nil, &UnsupportedError{What: "empty set operation"}
	}
	result := terms[0]
	for i, op := range ops {
		result = &SetOp{Op: op, Left: result, Right: terms[i+1]}
	}
	if orderBy == nil {
		orderBy = list.OrderBy
	}
	if limit == nil {
		limit = list.Limit
	}
	return withOrderAndLimit(result, orderBy, limit)
}

// convertSetOperand converts one operand and returns the operator that
// precedes it (nil for the first).
func convertSetOperand(n ast.Node) (Statement, *ast.SetOprType, error) {
	switch x := n.(type) {
	case *ast.SelectStmt:
		s, err := convertSelect(x)
		return s, x.AfterSetOperator, err
	case *ast.SetOprSelectList:
		s, err := convertSetOprList(x, nil, nil)
		return s, x.AfterSetOperator, err
	}
	return nil, nil, &UnsupportedError{What: "set operand of kind " + stmtName(n)}
}

// withOrderAndLimit attaches an ORDER BY / LIMIT that follows a set
// operation (or a parenthesised SELECT) to the statement it applies to.
func withOrderAndLimit(s Statement, orderBy *ast.OrderByClause, limit *ast.Limit) (Statement, error) {
	if orderBy == nil && limit == nil {
		return s, nil
	}
	items, err := convertOrderBy(orderBy)
	if err != nil {
		return nil, err
	}
	l, err := convertLimit(limit)
	if err != nil {
		return nil, err
	}
	switch x := s.(type) {
	case *SetOp:
		if (items != nil && x.OrderBy != nil) || (l != nil && x.Limit != nil) {
			break
		}
		if items != nil {
			x.OrderBy = items
		}
		if l != nil {
			x.Limit = l
		}
		return x, nil
	case *Select:
		if (items != nil && x.OrderBy != nil) || (l != nil && x.Limit != nil) {
			break
		}
		if items != nil {
			x.OrderBy = items
		}
		if l != nil {
			x.Limit = l
		}
		return x, nil
	}
	return nil, &UnsupportedError{What: "nested ORDER BY / LIMIT around a parenthesised query"}
}
