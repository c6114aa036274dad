package parser

import (
	"reflect"
	"strings"
	"unicode"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// pgConverter converts pg_query's tree into the model. It keeps the SQL
// text because the tree locates nodes by byte offset only, and the model
// wants the text of select items.
type pgConverter struct {
	sql string
}

// stmt converts one top-level statement.
func (c *pgConverter) stmt(n *pg.Node) (Statement, error) {
	switch s := n.GetNode().(type) {
	case *pg.Node_SelectStmt:
		return c.selectStmt(s.SelectStmt)
	case *pg.Node_VariableSetStmt:
		return c.setStmt(s.VariableSetStmt)
	case *pg.Node_VariableShowStmt:
		return &Show{Kind: ShowVariable, Name: strings.ToLower(s.VariableShowStmt.Name)}, nil
	case *pg.Node_TransactionStmt:
		return pgTransaction(s.TransactionStmt)
	case *pg.Node_ExplainStmt:
		return c.explain(s.ExplainStmt)
	case *pg.Node_DiscardStmt:
		return pgDiscard(s.DiscardStmt)
	case *pg.Node_DeallocateStmt:
		d := s.DeallocateStmt
		return &Deallocate{Name: d.Name, All: d.Isall}, nil
	}
	if what, ok := pgUnsupportedStmts[pgNodeName(n)]; ok {
		return nil, &UnsupportedError{What: what}
	}
	return &Write{Verb: pgWriteVerb(n)}, nil
}

// pgUnsupportedStmts are statements that neither read through the engine
// nor change anything; the rest of what is not converted above changes
// data, schema, roles or server state and is a Write.
var pgUnsupportedStmts = map[string]string{
	"PrepareStmt":        "PREPARE",
	"ExecuteStmt":        "EXECUTE",
	"DeclareCursorStmt":  "DECLARE CURSOR",
	"FetchStmt":          "FETCH",
	"ClosePortalStmt":    "CLOSE",
	"ListenStmt":         "LISTEN",
	"UnlistenStmt":       "UNLISTEN",
	"NotifyStmt":         "NOTIFY",
	"LoadStmt":           "LOAD",
	"DoStmt":             "DO",
	"CheckPointStmt":     "CHECKPOINT",
	"ConstraintsSetStmt": "SET CONSTRAINTS",
	"PlassignStmt":       "PL/pgSQL assignment",
	"ReturnStmt":         "RETURN",
}

// pgWriteVerbs names the common writes as PostgreSQL's command tags do.
var pgWriteVerbs = map[string]string{
	"InsertStmt":          "INSERT",
	"UpdateStmt":          "UPDATE",
	"DeleteStmt":          "DELETE",
	"MergeStmt":           "MERGE",
	"CopyStmt":            "COPY",
	"TruncateStmt":        "TRUNCATE",
	"CreateStmt":          "CREATE TABLE",
	"ViewStmt":            "CREATE VIEW",
	"IndexStmt":           "CREATE INDEX",
	"CreatedbStmt":        "CREATE DATABASE",
	"DropdbStmt":          "DROP DATABASE",
	"CreateSeqStmt":       "CREATE SEQUENCE",
	"CreateFunctionStmt":  "CREATE FUNCTION",
	"RenameStmt":          "ALTER",
	"CallStmt":            "CALL",
	"VacuumStmt":          "VACUUM",
	"LockStmt":            "LOCK TABLE",
	"RefreshMatViewStmt":  "REFRESH MATERIALIZED VIEW",
	"AlterSystemStmt":     "ALTER SYSTEM",
	"CreateRoleStmt":      "CREATE ROLE",
	"AlterRoleStmt":       "ALTER ROLE",
	"DropRoleStmt":        "DROP ROLE",
	"CreateSchemaStmt":    "CREATE SCHEMA",
	"CreateExtensionStmt": "CREATE EXTENSION",
	"CommentStmt":         "COMMENT",
}

// pgWriteVerb names a statement that changes something, for the refusal.
func pgWriteVerb(n *pg.Node) string {
	switch s := n.GetNode().(type) {
	case *pg.Node_DropStmt:
		return "DROP " + pgObjectName(s.DropStmt.RemoveType)
	case *pg.Node_AlterTableStmt:
		return "ALTER " + pgObjectName(s.AlterTableStmt.Objtype)
	case *pg.Node_CreateTableAsStmt:
		if s.CreateTableAsStmt.Objtype == pg.ObjectType_OBJECT_MATVIEW {
			return "CREATE MATERIALIZED VIEW"
		}
		return "CREATE TABLE AS"
	case *pg.Node_GrantStmt:
		if s.GrantStmt.IsGrant {
			return "GRANT"
		}
		return "REVOKE"
	case *pg.Node_GrantRoleStmt:
		if s.GrantRoleStmt.IsGrant {
			return "GRANT"
		}
		return "REVOKE"
	case *pg.Node_VacuumStmt:
		if !s.VacuumStmt.IsVacuumcmd {
			return "ANALYZE"
		}
	}
	name := pgNodeName(n)
	if verb, ok := pgWriteVerbs[name]; ok {
		return verb
	}
	return sqlWords(strings.TrimSuffix(name, "Stmt"))
}

// pgObjectName turns OBJECT_FOREIGN_TABLE into "FOREIGN TABLE".
func pgObjectName(t pg.ObjectType) string {
	if t == pg.ObjectType_OBJECT_MATVIEW {
		return "MATERIALIZED VIEW"
	}
	return strings.ReplaceAll(strings.TrimPrefix(t.String(), "OBJECT_"), "_", " ")
}

// pgNodeName is the node's type in pg_query's tree ("SelectStmt",
// "XmlExpr"), for error messages and the tables above.
func pgNodeName(n *pg.Node) string {
	v := n.GetNode()
	if v == nil {
		return "nothing"
	}
	return strings.TrimPrefix(reflect.TypeOf(v).Elem().Name(), "Node_")
}

// sqlWords turns a Go-style name into SQL words: "CreateSchema" → "CREATE
// SCHEMA".
func sqlWords(name string) string {
	var b strings.Builder
	for i, r := range name {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte(' ')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

func pgTransaction(t *pg.TransactionStmt) (Statement, error) {
	if t.Chain {
		return nil, &UnsupportedError{What: "AND CHAIN"}
	}
	switch t.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_BEGIN, pg.TransactionStmtKind_TRANS_STMT_START:
		// Isolation level and access mode do not matter: every answer is
		// read-only.
		return &Transaction{Kind: TxBegin}, nil
	case pg.TransactionStmtKind_TRANS_STMT_COMMIT: // also END
		return &Transaction{Kind: TxCommit}, nil
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK: // also ABORT
		return &Transaction{Kind: TxRollback}, nil
	case pg.TransactionStmtKind_TRANS_STMT_SAVEPOINT:
		return nil, &UnsupportedError{What: "SAVEPOINT"}
	case pg.TransactionStmtKind_TRANS_STMT_RELEASE:
		return nil, &UnsupportedError{What: "RELEASE SAVEPOINT"}
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		return nil, &UnsupportedError{What: "ROLLBACK TO SAVEPOINT"}
	}
	return nil, &UnsupportedError{What: "two-phase commit (PREPARE TRANSACTION)"}
}

func pgDiscard(d *pg.DiscardStmt) (Statement, error) {
	switch d.Target {
	case pg.DiscardMode_DISCARD_ALL:
		return &Discard{What: "all"}, nil
	case pg.DiscardMode_DISCARD_PLANS:
		return &Discard{What: "plans"}, nil
	case pg.DiscardMode_DISCARD_SEQUENCES:
		return &Discard{What: "sequences"}, nil
	case pg.DiscardMode_DISCARD_TEMP:
		return &Discard{What: "temp"}, nil
	}
	return nil, &UnsupportedError{What: "DISCARD of this kind"}
}

// explain converts EXPLAIN [(options)] statement. Options other than
// ANALYZE only change the plan's presentation.
func (c *pgConverter) explain(e *pg.ExplainStmt) (Statement, error) {
	for _, o := range e.Options {
		if d := o.GetDefElem(); d != nil && d.Defname == "analyze" && pgDefElemTrue(d) {
			return nil, &UnsupportedError{What: "EXPLAIN ANALYZE"}
		}
	}
	inner, err := c.stmt(e.Query)
	if err != nil {
		return nil, err
	}
	return &Explain{Stmt: inner}, nil
}

// pgDefElemTrue reads an option's boolean: no argument means true
// (EXPLAIN (ANALYZE)); otherwise off/false/0 mean false.
func pgDefElemTrue(d *pg.DefElem) bool {
	if d.Arg == nil {
		return true
	}
	switch v := d.Arg.GetNode().(type) {
	case *pg.Node_String_:
		s := strings.ToLower(v.String_.Sval)
		return s != "false" && s != "off" && s != "0" && s != "no"
	case *pg.Node_Integer:
		return v.Integer.Ival != 0
	case *pg.Node_Boolean:
		return v.Boolean.Boolval
	}
	return true
}
