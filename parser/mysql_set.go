package parser

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// TiDB's names for the assignments that SET [GLOBAL|SESSION] TRANSACTION
// produces, and the MySQL 8 system variables they set.
var mysqlTxVariables = map[string]string{
	"tx_isolation":          "transaction_isolation",
	"tx_isolation_one_shot": "transaction_isolation", // SET TRANSACTION without a scope
	"tx_read_only":          "transaction_read_only",
}

// convertSet converts SET a = 1, @@global.b = 2, @u = 3, NAMES ..., and
// SET [GLOBAL|SESSION] TRANSACTION ....
func convertSet(s *ast.SetStmt) (*Set, error) {
	out := &Set{Assignments: make([]Assignment, 0, len(s.Variables))}
	for _, v := range s.Variables {
		switch v.Name {
		case ast.SetNames:
			value, err := setValue(v.Value, true)
			if err != nil {
				return nil, err
			}
			out.Assignments = append(out.Assignments, Assignment{Name: "names", Scope: ScopeSession, Value: value})
			if v.ExtendValue != nil {
				// SET NAMES cs COLLATE co also sets collation_connection.
				collation, err := convertExpr(v.ExtendValue)
				if err != nil {
					return nil, err
				}
				out.Assignments = append(out.Assignments, Assignment{Name: "collation_connection", Scope: ScopeSession, Value: collation})
			}
			continue
		case ast.SetCharset:
			value, err := setValue(v.Value, true)
			if err != nil {
				return nil, err
			}
			out.Assignments = append(out.Assignments, Assignment{Name: "charset", Scope: ScopeSession, Value: value})
			continue
		case "tx_read_ts":
			return nil, &UnsupportedError{What: "SET TRANSACTION READ ONLY AS OF"}
		}
		if v.IsInstance {
			return nil, &UnsupportedError{What: "SET INSTANCE"}
		}
		a := Assignment{Name: strings.ToLower(v.Name), Scope: ScopeSession}
		switch {
		case !v.IsSystem:
			a.Scope = ScopeUser
		case v.IsGlobal:
			a.Scope = ScopeGlobal
		}
		if name, ok := mysqlTxVariables[a.Name]; ok && v.IsSystem {
			a.Name = name
		}
		value, err := setValue(v.Value, v.IsSystem)
		if err != nil {
			return nil, err
		}
		a.Value = value
		out.Assignments = append(out.Assignments, a)
	}
	return out, nil
}

// setValue converts the right-hand side of a SET assignment. For a system
// variable MySQL reads a bare word as its name (SET sql_mode = TRADITIONAL,
// SET autocommit = OFF), so an unqualified column reference becomes a
// string; for a user variable it stays a column reference (an error later).
func setValue(e ast.ExprNode, system bool) (Expr, error) {
	switch x := e.(type) {
	case *ast.DefaultExpr:
		return nil, &UnsupportedError{What: "SET ... = DEFAULT"}
	case *ast.ColumnNameExpr:
		if system && x.Name.Table.L == "" && x.Name.Schema.L == "" {
			return &Literal{Value: x.Name.Name.O}, nil
		}
	}
	return convertExpr(e)
}
