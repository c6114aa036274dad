package parser

import (
	"reflect"
	"strings"
	"unicode"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// convertMySQLStmt converts one TiDB statement node into the model.
func convertMySQLStmt(n ast.StmtNode) (Statement, error) {
	switch s := n.(type) {
	case *ast.SelectStmt:
		return convertSelect(s)
	case *ast.SetOprStmt:
		return convertSetOpr(s)
	case *ast.SetStmt:
		return convertSet(s)
	case *ast.UseStmt:
		return &Use{DB: s.DBName}, nil
	case *ast.ShowStmt:
		return convertShow(s)
	case *ast.ExplainStmt:
		return convertExplain(s)
	case *ast.BeginStmt:
		if s.AsOf != nil {
			return nil, &UnsupportedError{What: "START TRANSACTION ... AS OF"}
		}
		return &Transaction{Kind: TxBegin}, nil
	case *ast.CommitStmt:
		return &Transaction{Kind: TxCommit}, nil
	case *ast.RollbackStmt:
		if s.SavepointName != "" {
			return nil, &UnsupportedError{What: "ROLLBACK TO SAVEPOINT"}
		}
		return &Transaction{Kind: TxRollback}, nil
	}
	if verb := writeVerb(n); verb != "" {
		return &Write{Verb: verb}, nil
	}
	return nil, &UnsupportedError{What: stmtName(n)}
}

// writeVerb names a statement that would change data, schema, users or
// server state, or returns "" when n is not one.
func writeVerb(n ast.StmtNode) string {
	switch s := n.(type) {
	case *ast.InsertStmt:
		if s.IsReplace {
			return "REPLACE"
		}
		return "INSERT"
	case *ast.UpdateStmt:
		return "UPDATE"
	case *ast.DeleteStmt:
		return "DELETE"
	case *ast.NonTransactionalDMLStmt:
		return "BATCH"
	case *ast.LoadDataStmt:
		return "LOAD DATA"
	case *ast.ImportIntoStmt:
		return "IMPORT INTO"
	case *ast.CallStmt:
		return "CALL"
	case *ast.TruncateTableStmt:
		return "TRUNCATE"
	case *ast.GrantStmt, *ast.GrantRoleStmt, *ast.GrantProxyStmt:
		return "GRANT"
	case *ast.RevokeStmt, *ast.RevokeRoleStmt:
		return "REVOKE"
	case *ast.SetPwdStmt:
		return "SET PASSWORD"
	case *ast.SetDefaultRoleStmt:
		return "SET DEFAULT ROLE"
	case *ast.CreateUserStmt, *ast.AlterUserStmt, *ast.DropUserStmt, *ast.RenameUserStmt,
		*ast.AnalyzeTableStmt, *ast.FlushStmt, *ast.OptimizeTableStmt, *ast.RepairTableStmt:
		return stmtName(n)
	case ast.DDLNode:
		// CREATE/DROP/ALTER/RENAME of tables, databases, views, indexes,
		// sequences, LOCK/UNLOCK TABLES, ...
		return stmtName(n)
	}
	return ""
}

// stmtName names a TiDB statement type for an error message: the node's Go
// type in SQL words (*ast.CreateTableStmt → "CREATE TABLE").
func stmtName(n ast.Node) string {
	t := reflect.TypeOf(n)
	if t == nil {
		return "nothing"
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	name := t.Name()
	name = strings.TrimSuffix(strings.TrimSuffix(name, "Stmt"), "Expr")
	var b strings.Builder
	for i, r := range name {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte(' ')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// convertExplain handles EXPLAIN <statement> and DESCRIBE/DESC/EXPLAIN
// <table>, which TiDB parses as an EXPLAIN of SHOW COLUMNS.
func convertExplain(s *ast.ExplainStmt) (Statement, error) {
	if show, ok := s.Stmt.(*ast.ShowStmt); ok && show.Tp == ast.ShowColumns && show.Table != nil {
		out := &Show{Kind: ShowColumns, Table: show.Table.Name.O, Schema: show.Table.Schema.O}
		if show.Column != nil {
			// DESCRIBE t col is SHOW COLUMNS FROM t LIKE 'col'.
			out.Like = show.Column.Name.O
		}
		return out, nil
	}
	if s.Analyze {
		return nil, &UnsupportedError{What: "EXPLAIN ANALYZE"}
	}
	if s.Stmt == nil {
		return nil, &UnsupportedError{What: "EXPLAIN of a plan digest"}
	}
	inner, err := convertMySQLStmt(s.Stmt)
	if err != nil {
		return nil, err
	}
	return &Explain{Stmt: inner}, nil
}
