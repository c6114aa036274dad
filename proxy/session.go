package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime/debug"
	"strings"
	"time"

	"github.com/dpproxy/dpproxy/catalog"
	"github.com/dpproxy/dpproxy/eval"
	"github.com/dpproxy/dpproxy/ledger"
	"github.com/dpproxy/dpproxy/metrics"
	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/rewrite"
)

// Session is one client connection's state. A session is used by one
// connection at a time, so it needs no lock.
type Session struct {
	engine  *Engine
	user    *policy.User
	role    *policy.Role
	dialect parser.Dialect
	id      uint32
	db      string

	settings settings
	vars     map[string]any // other session variables a client SET
	userVars map[string]any // @x user variables
	warnings []string
	kind     string // the metrics kind of the statement being answered
}

// ID is the connection id clients see (CONNECTION_ID()).
func (s *Session) ID() uint32 { return s.id }

// User is the session's login name.
func (s *Session) User() string { return s.user.Name }

// Database is the session's current database ("" for none).
func (s *Session) Database() string { return s.db }

// Close ends the session.
func (s *Session) Close() {
	s.engine.metrics.Connections(s.frontend(), -1)
}

// Execute runs one statement. A panic inside is caught and returned as an
// internal error so that one bad statement never takes down the proxy.
func (s *Session) Execute(ctx context.Context, sql string) (res *Result, err error) {
	return s.run(ctx, sql, nil, nil)
}

// Split cuts the text of a PostgreSQL simple query into the statements
// that Execute then runs one at a time (parser.SplitPG): none for text
// with no statement, the text itself when it holds one. A syntax error
// anywhere is returned before any of it runs, as PostgreSQL does. The
// whole text is held to the statement size limit first, as Execute holds
// one statement. The MySQL dialect does not split (its clients ask for
// several statements with CLIENT_MULTI_STATEMENTS, not supported).
func (s *Session) Split(sql string) ([]string, error) {
	if s.dialect != parser.PostgreSQL {
		return []string{sql}, nil
	}
	if err := s.engine.checkStatementSize(sql); err != nil {
		return nil, err
	}
	stmts, err := parser.SplitPG(sql)
	if err != nil {
		return nil, s.classify(err)
	}
	return stmts, nil
}

// Prepare parses a statement for later execution with parameters.
func (s *Session) Prepare(ctx context.Context, sql string) (*Prepared, error) {
	if err := s.engine.checkStatementSize(sql); err != nil {
		return nil, err
	}
	p, err := s.engine.stmts.parse(sql, s.dialect)
	if err != nil {
		return nil, s.classify(err)
	}
	return &Prepared{SQL: sql, ParamCount: p.params, parsed: p}, nil
}

// ExecutePrepared runs a prepared statement with its parameter values.
func (s *Session) ExecutePrepared(ctx context.Context, p *Prepared, args []Value) (*Result, error) {
	if len(args) != p.ParamCount {
		return nil, Errorf(CodeBadValue, "statement expects %d parameters, got %d", p.ParamCount, len(args))
	}
	for i, a := range args {
		if f, ok := a.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return nil, Errorf(CodeBadValue, "parameter %d is %v: parameters must be finite numbers", i+1, f)
		}
	}
	return s.run(ctx, p.SQL, p.parsed, args)
}

func (s *Session) run(ctx context.Context, sql string, p *parsed, args []Value) (res *Result, err error) {
	start := time.Now()
	s.kind = metrics.KindSession
	defer func() {
		if r := recover(); r != nil {
			s.engine.log.Error("panic in session", "session", s.id, "user", s.user.Name, "panic", r, "stack", string(debug.Stack()))
			res, err = nil, Errorf(CodeInternal, "internal error in dpproxy (logged); the session goes on")
		}
		s.observe(s.kind, start, err)
	}()
	if p == nil {
		if err := s.engine.checkStatementSize(sql); err != nil {
			return nil, err
		}
		if p, err = s.engine.stmts.parse(sql, s.dialect); err != nil {
			return nil, s.classify(err)
		}
		if p.params > 0 {
			return nil, Errorf(CodeBadValue, "statement has %d parameters but none were given", p.params)
		}
	}
	if show, ok := p.stmt.(*parser.Show); !ok || show.Kind != parser.ShowWarnings {
		s.warnings = nil
	}
	s.kind = statementKind(p.stmt)
	res, err = s.dispatch(ctx, sql, p, args)
	if err == nil && res.Columns == nil && res.Info == "" {
		res.Info = commandTag(p.stmt)
	}
	if err != nil {
		err = s.classify(err)
		s.engine.log.Debug("statement failed", "session", s.id, "user", s.user.Name, "sql", clip(sql), "err", err)
	}
	return res, err
}

func (s *Session) dispatch(ctx context.Context, sql string, p *parsed, args []Value) (*Result, error) {
	switch st := p.stmt.(type) {
	case *parser.Empty:
		return &Result{}, nil
	case *parser.Select, *parser.SetOp:
		if res, ok, err := s.pgCatalogStatement(ctx, st, args); ok {
			return res, err
		}
		if sel, ok := st.(*parser.Select); ok {
			return s.selectStmt(ctx, sql, p.fingerprint, sel, args)
		}
		return nil, s.setOp(st.(*parser.SetOp))
	case *parser.Set:
		return s.set(ctx, st, args)
	case *parser.Use:
		if err := s.use(st.DB); err != nil {
			return nil, err
		}
		return &Result{}, nil
	case *parser.Show:
		if s.dialect == parser.PostgreSQL && st.Kind == parser.ShowVariable {
			return s.pgShow(st.Name)
		}
		return s.show(st)
	case *parser.Transaction:
		// DP queries are read-only and answered from committed data;
		// transaction statements are accepted so that drivers work.
		return &Result{}, nil
	case *parser.Reset:
		if st.Name == "all" {
			s.settings = settings{}
			clear(s.vars)
		} else {
			s.resetVar(st.Name)
		}
		return &Result{}, nil
	case *parser.Discard:
		s.settings = settings{}
		clear(s.vars)
		clear(s.userVars)
		return &Result{}, nil
	case *parser.Deallocate:
		// Prepared statements live in the front door; nothing to drop here.
		return &Result{}, nil
	case *parser.Write:
		return nil, Errorf(CodeRefused, "dpproxy is read-only: %s is not allowed through the proxy", st.Verb)
	case *parser.Explain:
		return nil, Errorf(CodeRefused, "EXPLAIN would reveal the backend's row estimates; dpproxy does not forward it")
	case *parser.ShowPrivacyBudget:
		return s.showBudget(ctx, st)
	case *parser.ExplainPrivacy:
		return s.explainPrivacy(ctx, st, args)
	case *parser.SetPrivacyBudget:
		return s.setBudget(ctx, st)
	case *parser.ResetPrivacyBudget:
		return s.resetBudget(ctx, st)
	case *parser.ShowPrivacyLedger:
		return s.showLedger(ctx, st)
	case *parser.TrainModel:
		return s.trainModel(ctx, sql, st)
	case *parser.ShowModels:
		return s.showModels(ctx)
	case *parser.ShowModel:
		return s.showModel(ctx, st)
	case *parser.DropModel:
		return s.dropModel(ctx, st)
	case *parser.EvaluateModel:
		return s.evaluateModel(ctx, sql, st)
	}
	return nil, Errorf(CodeUnsupported, "unsupported statement %T", p.stmt)
}

// clip shortens client-sent text for a log line: a statement may be a
// megabyte, and logs must not grow with what a client sends.
func clip(s string) string {
	const max = 512
	if len(s) <= max {
		return s
	}
	return s[:max] + fmt.Sprintf("… (%d bytes)", len(s))
}

// checkStatementSize refuses a statement longer than
// limits.max_statement_bytes before any parser sees it.
func (e *Engine) checkStatementSize(sql string) error {
	limit := e.policy.Limits.MaxStatementBytes
	if limit <= 0 {
		limit = policy.DefaultMaxStatementBytes
	}
	if len(sql) > limit {
		return Errorf(CodeUnsupported, "the statement is %d bytes, more than limits.max_statement_bytes (%d)", len(sql), limit)
	}
	return nil
}

// classify turns errors from the parts into *Error with the right code.
func (s *Session) classify(err error) error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	if e, ok := classifyPG(err); ok {
		return e
	}
	var syn *parser.SyntaxError
	var uns *parser.UnsupportedError
	var ref *rewrite.RefusedError
	var ut *rewrite.UnknownTableError
	var uc *rewrite.UnknownColumnError
	var cref *catalog.RefusedError
	var cut *catalog.UnknownTableError
	var cudb *catalog.UnknownDBError
	var be *ledger.BudgetError
	switch {
	case errors.As(err, &syn):
		return &Error{Code: CodeSyntax, Msg: syn.Msg, Err: err}
	case errors.As(err, &uns):
		return &Error{Code: CodeUnsupported, Msg: uns.Error(), Err: err}
	case errors.As(err, &ref):
		return &Error{Code: CodeRefused, Msg: "dpproxy refused the query: " + ref.Reason, Err: err}
	case errors.As(err, &ut):
		return &Error{Code: CodeUnknownTable, Msg: fmt.Sprintf("Table '%s.%s' doesn't exist", s.db, ut.Table), Err: err}
	case errors.As(err, &uc):
		return &Error{Code: CodeUnknownColumn, Msg: fmt.Sprintf("Unknown column '%s' in '%s'", uc.Column, uc.Table), Err: err}
	case errors.As(err, &cref):
		return &Error{Code: CodeRefused, Msg: "dpproxy refused the query: " + cref.Reason, Err: err}
	case errors.As(err, &cut):
		return &Error{Code: CodeUnknownTable, Msg: cut.Error(), Err: err}
	case errors.As(err, new(*catalog.NoDatabaseError)):
		return &Error{Code: CodeUnknownDB, Msg: "No database selected", Err: err}
	case errors.As(err, new(*catalog.UnknownVariableError)):
		return &Error{Code: CodeBadValue, Msg: err.Error(), Err: err}
	case errors.As(err, &cudb):
		return &Error{Code: CodeUnknownDB, Msg: cudb.Error(), Err: err}
	case errors.As(err, &be):
		return &Error{Code: CodeBudget, Msg: be.Error(), Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: CodeTimeout, Msg: "query timed out", Err: err}
	case errors.Is(err, context.Canceled):
		return &Error{Code: CodeCanceled, Msg: "query was canceled", Err: err}
	}
	var ev *eval.UnsupportedError
	if errors.As(err, &ev) {
		return &Error{Code: CodeUnsupported, Msg: ev.Error(), Err: err}
	}
	s.engine.log.Warn("unclassified error", "session", s.id, "err", err)
	return &Error{Code: CodeInternal, Msg: err.Error(), Err: err}
}

// use switches the current database: the one dpproxy serves, or
// information_schema for catalog reads.
func (s *Session) use(db string) error {
	switch {
	case s.engine.servesDatabase(db):
		s.db = s.engine.database
	case strings.EqualFold(db, "information_schema"):
		s.db = "information_schema"
	default:
		return Errorf(CodeUnknownDB, "Unknown database '%s'", db)
	}
	return nil
}

// sessionInfo is what the catalog needs to know of the session.
func (s *Session) sessionInfo() catalog.SessionInfo {
	return catalog.SessionInfo{
		User:     s.user.Name,
		Database: s.db,
		Vars:     s.variable,
		Warnings: s.warnings,
	}
}

func (s *Session) logAttrs() []any {
	return []any{slog.Uint64("session", uint64(s.id)), slog.String("user", s.user.Name)}
}
