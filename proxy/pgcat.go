package proxy

import (
	"context"
	"errors"
	"strings"

	"github.com/dpproxy/dpproxy/catalog/pgcatalog"
	"github.com/dpproxy/dpproxy/eval"
	"github.com/dpproxy/dpproxy/parser"
)

// pgServerVersion is the version the emulated pg_catalog reports
// (server_version, version()).
const pgServerVersion = "16.0"

// pgCatalogStatement answers a PostgreSQL session's catalog read (psql's
// \dt, drivers' metadata, version(), current_setting()) from the emulated
// pg_catalog, which holds no row data or statistics. ok is false when the
// statement is not a catalog read.
func (s *Session) pgCatalogStatement(ctx context.Context, stmt parser.Statement, args []Value) (*Result, bool, error) {
	if s.dialect != parser.PostgreSQL {
		return nil, false, nil
	}
	cat := s.engine.pgCatalog()
	if cat == nil || !cat.IsCatalogQuery(stmt) {
		return nil, false, nil
	}
	params := make([]any, len(args))
	copy(params, args)
	cols, rows, err := cat.Query(ctx, stmt, s.pgSession(), params...)
	if err != nil {
		return nil, true, err
	}
	res := &Result{Columns: make([]Column, len(cols)), Rows: make([][]Value, len(rows))}
	for i, c := range cols {
		res.Columns[i] = Column{Name: c.Name, Type: oidType(c.OID)}
	}
	for i, r := range rows {
		for j, v := range r {
			if b, ok := v.(bool); ok {
				// PostgreSQL prints booleans as t/f.
				v = map[bool]string{true: "t", false: "f"}[b]
			}
			r[j] = v
		}
		res.Rows[i] = r
	}
	return res, true, nil
}

// pgShow answers SHOW name for a PostgreSQL session.
func (s *Session) pgShow(name string) (*Result, error) {
	if strings.HasPrefix(name, "dp_") {
		v, _ := s.variable(name)
		return &Result{Columns: []Column{{Name: name, Type: TypeString}}, Rows: [][]Value{{eval.ToString(v)}}}, nil
	}
	v, err := s.engine.pgCatalog().Show(name, s.pgSession())
	if err != nil {
		return nil, err
	}
	return &Result{Columns: []Column{{Name: name, Type: TypeString}}, Rows: [][]Value{{v}}, Info: "SHOW"}, nil
}

func (s *Session) pgSession() pgcatalog.Session {
	app, _ := s.vars["application_name"].(string)
	return pgcatalog.Session{
		User: s.user.Name, Database: s.engine.database, ApplicationName: app,
		Settings: func(name string) (string, bool) {
			v, ok := s.variable(name)
			if !ok {
				return "", false
			}
			return eval.ToString(v), true
		},
	}
}

// oidType maps a PostgreSQL type OID onto a result column type.
func oidType(oid uint32) ColumnType {
	switch oid {
	case 20, 21, 23, 26:
		return TypeInt
	case 700, 701, 1700:
		return TypeFloat
	}
	return TypeString
}

// classifyPG maps the emulated catalog's errors (which carry a SQLSTATE).
func classifyPG(err error) (*Error, bool) {
	var st interface{ SQLState() string }
	if !errors.As(err, &st) {
		return nil, false
	}
	// 57014 and 54000 are the catalog's own time and size caps
	// (pgcatalog.LimitError).
	code := map[string]Code{"42501": CodeRefused, "42P01": CodeUnknownTable, "42704": CodeBadValue, "0A000": CodeUnsupported,
		"57014": CodeTimeout, "54000": CodeUnsupported}[st.SQLState()]
	msg := err.Error()
	if code == CodeRefused {
		msg = "dpproxy refused the query: " + msg
	}
	return &Error{Code: code, Msg: msg, Err: err}, true
}
