package proxy

import (
	"context"
	"fmt"
	"strings"

	"github.com/dpproxy/dpproxy/eval"
	"github.com/dpproxy/dpproxy/metrics"
	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/rewrite"
)

// selectStmt routes a SELECT by what it reads: nothing (answered here),
// the catalog (answered here), public tables (forwarded), or a private
// table (the DP path).
func (s *Session) selectStmt(ctx context.Context, sqlText, fingerprint string, sel *parser.Select, args []Value) (*Result, error) {
	if sel.From == nil {
		cols, rows, err := eval.Select(sel, nil, s.env(args))
		if err != nil {
			return nil, err
		}
		return tableResult(cols, rows), nil
	}
	tables := baseTables(sel.From)
	if len(tables) == 1 && s.isCatalog(tables[0]) {
		t, ok := s.engine.cat().Table(tables[0].Name)
		if !ok {
			return nil, Errorf(CodeUnknownTable, "Table 'information_schema.%s' doesn't exist", tables[0].Name)
		}
		cols, rows, err := eval.Select(sel, t, s.env(args))
		if err != nil {
			return nil, err
		}
		return tableResult(cols, rows), nil
	}
	public := true
	for _, tn := range tables {
		if s.isCatalog(tn) {
			return nil, Errorf(CodeUnsupported, "catalog tables can only be read one at a time, without joins")
		}
		if err := s.checkSchema(tn); err != nil {
			return nil, err
		}
		t, ok := s.engine.policy.Table(tn.Name)
		if !ok {
			if _, inBackend := s.engine.backendTable(tn.Name); inBackend {
				return nil, Errorf(CodeRefused, "dpproxy refused the query: table %s is not in dpproxy's policy; tables the policy does not list cannot be queried", tn.Name)
			}
			return nil, Errorf(CodeUnknownTable, "Table '%s.%s' doesn't exist", s.engine.database, tn.Name)
		}
		if _, ok := s.engine.Columns(t.Name); !ok {
			s.engine.refreshSchema(ctx)
			if _, ok := s.engine.Columns(t.Name); !ok {
				return nil, Errorf(CodeUnknownTable, "Table '%s.%s' doesn't exist", s.engine.database, tn.Name)
			}
		}
		if !t.Public {
			public = false
		}
	}
	if public {
		s.kind = metrics.KindPublic
		return s.publicSelect(ctx, sel, args)
	}
	// A statement that returns no rows whatever the data is answered here,
	// before any charge, with its columns (rewrite.ProvablyEmpty).
	if res, ok := s.probe(sel, args); ok {
		s.kind = metrics.KindCatalog
		return res, nil
	}
	s.kind = metrics.KindDP
	return s.dpSelect(ctx, sqlText, fingerprint, sel, args)
}

// pgSchema is the schema PostgreSQL clients see the served tables in, on
// every backend: the catalog advertises it, and Metabase, Superset, Tableau
// and DBeaver qualify every data query with it.
const pgSchema = "public"

// checkSchema accepts a table name qualified with the served database, and
// on the PostgreSQL door with its schema, public.
func (s *Session) checkSchema(tn *parser.TableName) error {
	if tn.Schema != "" && !s.engine.servesDatabase(tn.Schema) &&
		!(s.dialect == parser.PostgreSQL && strings.EqualFold(tn.Schema, pgSchema)) {
		if s.dialect == parser.PostgreSQL {
			return Errorf(CodeUnknownTable, "relation \"%s.%s\" does not exist (dpproxy serves schema %s)", tn.Schema, tn.Name, pgSchema)
		}
		return Errorf(CodeUnknownDB, "Unknown database '%s'", tn.Schema)
	}
	if tn.Schema == "" && s.db == "" {
		return Errorf(CodeUnknownDB, "No database selected")
	}
	return nil
}

func (s *Session) isCatalog(tn *parser.TableName) bool {
	if tn.Schema != "" {
		return strings.EqualFold(tn.Schema, "information_schema")
	}
	return s.db == "information_schema"
}

// baseTables lists the tables a FROM clause reads, through joins and
// derived tables.
func baseTables(te parser.TableExpr) []*parser.TableName {
	switch t := te.(type) {
	case *parser.TableName:
		return []*parser.TableName{t}
	case *parser.Join:
		return append(baseTables(t.Left), baseTables(t.Right)...)
	case *parser.DerivedTable:
		if sel, ok := t.Select.(*parser.Select); ok && sel.From != nil {
			return baseTables(sel.From)
		}
	}
	return nil
}

// publicSelect forwards a query that reads only public tables.
func (s *Session) publicSelect(ctx context.Context, sel *parser.Select, args []Value) (*Result, error) {
	q, err := rewrite.Public(sel, s.engine.backendDialect(), args)
	if err != nil {
		return nil, err
	}
	rows, err := s.engine.backend.DB.QueryContext(ctx, q)
	if err != nil {
		return nil, s.backendError(err)
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return nil, s.backendError(err)
	}
	var out [][]any
	for rows.Next() {
		raw := make([]any, len(names))
		ptrs := make([]any, len(names))
		for i := range raw {
			ptrs[i] = &raw[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, s.backendError(err)
		}
		for i, v := range raw {
			if b, ok := v.([]byte); ok {
				raw[i] = string(b)
			}
		}
		out = append(out, raw)
		if len(out) > s.engine.maxBackendGroups() {
			return nil, Errorf(CodeRefused, "dpproxy refused the query: more than %d rows", s.engine.maxBackendGroups())
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.backendError(err)
	}
	return tableResult(names, out), nil
}

// setOp refuses UNION and friends over private tables (they release rows)
// and does not support them otherwise.
func (s *Session) setOp(op *parser.SetOp) error {
	return Errorf(CodeUnsupported, "unsupported SQL: %s", strings.ToUpper(op.Op))
}

// tableResult builds a result from evaluated rows, typing each column by its
// values.
func tableResult(cols []string, rows [][]any) *Result {
	res := &Result{Columns: make([]Column, len(cols)), Rows: make([][]Value, len(rows))}
	for i, r := range rows {
		for j, v := range r {
			r[j] = normalize(v)
		}
		res.Rows[i] = r
	}
	for i, c := range cols {
		t, seen := valuesType(res.Rows, i)
		if !seen {
			t = TypeString
		}
		res.Columns[i] = Column{Name: c, Type: t}
	}
	return res
}

// normalize maps evaluator values onto the wire's value types.
func normalize(v any) any {
	switch x := v.(type) {
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case int:
		return int64(x)
	case []byte:
		return string(x)
	}
	return v
}

// env is the evaluation environment of a statement without rows: session
// functions, variables and parameters.
func (s *Session) env(args []Value) eval.Env { return &sessionEnv{s: s, args: args} }

type sessionEnv struct {
	s    *Session
	args []Value
}

func (e *sessionEnv) Column(ref *parser.ColumnRef) (any, error) {
	return nil, Errorf(CodeUnknownColumn, "Unknown column '%s' in 'field list'", ref.Name)
}

func (e *sessionEnv) Variable(v *parser.Variable) (any, error) {
	if !v.System {
		return e.s.userVars[v.Name], nil
	}
	if val, ok := e.s.engine.cat().Variable(v.Name, e.s.sessionInfo()); ok {
		return val, nil
	}
	return nil, Errorf(CodeBadValue, "Unknown system variable '%s'", v.Name)
}

func (e *sessionEnv) Param(i int) (any, error) {
	if i < 0 || i >= len(e.args) {
		return nil, Errorf(CodeBadValue, "parameter %d has no value", i+1)
	}
	return e.args[i], nil
}

func (e *sessionEnv) Call(f *parser.Func) (any, bool, error) {
	s := e.s
	switch f.Name {
	case "database", "schema", "current_schema", "current_database":
		if s.db == "" {
			return nil, true, nil
		}
		return s.db, true, nil
	case "user", "current_user", "session_user", "system_user":
		return s.user.Name + "@%", true, nil
	case "version":
		return s.engine.ServerVersion(), true, nil
	case "connection_id", "pg_backend_pid":
		return int64(s.id), true, nil
	case "last_insert_id", "found_rows":
		return int64(0), true, nil
	case "row_count":
		return int64(-1), true, nil
	}
	if eval.IsAggregate(f.Name) && len(f.Args) > 0 {
		return nil, true, fmt.Errorf("aggregate %s needs a table", strings.ToUpper(f.Name))
	}
	return nil, false, nil
}
