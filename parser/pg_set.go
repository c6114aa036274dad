package parser

import (
	"fmt"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// pgRefusedSettings are SET targets that change who the session is; they
// are refused rather than passed to the engine's settings.
var pgRefusedSettings = map[string]string{
	"role":                  "SET ROLE",
	"session_authorization": "SET SESSION AUTHORIZATION",
}

// setStmt converts SET [SESSION | LOCAL] name {= | TO} value[, ...], SET
// TIME ZONE, SET NAMES, SET SCHEMA (PostgreSQL's grammar already names them
// timezone, client_encoding and search_path), SET name TO DEFAULT, RESET
// and SET [SESSION CHARACTERISTICS AS] TRANSACTION.
//
// SET LOCAL lasts until the end of the transaction in PostgreSQL; dpproxy
// answers read-only and keeps no transaction state, so it is a session
// assignment.
func (c *pgConverter) setStmt(s *pg.VariableSetStmt) (Statement, error) {
	name := strings.ToLower(s.Name)
	if what, ok := pgRefusedSettings[name]; ok {
		return nil, &UnsupportedError{What: what}
	}
	switch s.Kind {
	case pg.VariableSetKind_VAR_SET_VALUE:
		if name == "timezone" && len(s.Args) == 1 {
			if zone, ok := pgIntervalZone(s.Args[0]); ok {
				return &Set{Assignments: []Assignment{{Name: name, Scope: ScopeSession, Value: &Literal{Value: zone}}}}, nil
			}
		}
		value, err := c.setValue(s.Args)
		if err != nil {
			return nil, err
		}
		return &Set{Assignments: []Assignment{{Name: name, Scope: ScopeSession, Value: value}}}, nil
	case pg.VariableSetKind_VAR_SET_DEFAULT, pg.VariableSetKind_VAR_RESET:
		return &Reset{Name: name}, nil
	case pg.VariableSetKind_VAR_RESET_ALL:
		return &Reset{Name: "all"}, nil
	case pg.VariableSetKind_VAR_SET_MULTI:
		return c.setTransaction(s)
	}
	return nil, &UnsupportedError{What: "SET ... FROM CURRENT"}
}

// setValue converts the value list of a SET. Bare words arrive as string
// constants already (SET search_path TO public). A list (SET search_path =
// a, b) is one string with the items joined by ", ", as SHOW reports it.
func (c *pgConverter) setValue(args []*pg.Node) (Expr, error) {
	if len(args) == 1 {
		return c.expr(args[0])
	}
	parts := make([]string, 0, len(args))
	for _, a := range args {
		e, err := c.expr(a)
		if err != nil {
			return nil, err
		}
		l, ok := e.(*Literal)
		if !ok {
			return nil, &UnsupportedError{What: "SET with a list of values that are not constants"}
		}
		parts = append(parts, literalText(l))
	}
	return &Literal{Value: strings.Join(parts, ", ")}, nil
}

// literalText renders a constant of a SET list as PostgreSQL's SHOW would.
func literalText(l *Literal) string {
	if l.IsDecimal {
		return l.Text
	}
	switch v := l.Value.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// setTransaction converts SET TRANSACTION ... and SET SESSION
// CHARACTERISTICS AS TRANSACTION ..., whose items PostgreSQL's grammar
// already names by their settings (transaction_isolation,
// transaction_read_only, transaction_deferrable).
func (c *pgConverter) setTransaction(s *pg.VariableSetStmt) (Statement, error) {
	switch s.Name {
	case "TRANSACTION", "SESSION CHARACTERISTICS":
	default:
		return nil, &UnsupportedError{What: "SET " + s.Name}
	}
	out := &Set{Assignments: make([]Assignment, 0, len(s.Args))}
	for _, a := range s.Args {
		d := a.GetDefElem()
		if d == nil {
			return nil, &UnsupportedError{What: "SET TRANSACTION item of kind " + pgNodeName(a)}
		}
		value, err := c.expr(d.Arg)
		if err != nil {
			return nil, err
		}
		out.Assignments = append(out.Assignments, Assignment{Name: d.Defname, Scope: ScopeSession, Value: value})
	}
	return out, nil
}

// pgIntervalZone reads SET TIME ZONE INTERVAL '+00:00' HOUR TO MINUTE
// (sequelize sends it on connect): a fixed offset, named as PostgreSQL's
// SHOW TimeZone names it ("<+00>-00", "<+05:30>-05:30", "<-08>+08").
func pgIntervalZone(n *pg.Node) (string, bool) {
	tc := n.GetTypeCast()
	if tc == nil || tc.TypeName == nil || len(tc.TypeName.Names) == 0 {
		return "", false
	}
	if tc.TypeName.Names[len(tc.TypeName.Names)-1].GetString_().GetSval() != "interval" {
		return "", false
	}
	c := tc.Arg.GetAConst()
	if c == nil || c.GetSval() == nil {
		return "", false
	}
	text := strings.TrimSpace(c.GetSval().Sval)
	sign := "+"
	if rest, ok := strings.CutPrefix(text, "-"); ok {
		sign, text = "-", rest
	} else {
		text = strings.TrimPrefix(text, "+")
	}
	hh, mm, _ := strings.Cut(text, ":")
	h, err1 := strconv.Atoi(hh)
	m, err2 := 0, error(nil)
	if mm != "" {
		m, err2 = strconv.Atoi(mm)
	}
	if err1 != nil || err2 != nil || h < 0 || h > 15 || m < 0 || m > 59 || len(hh) > 2 || len(mm) > 2 {
		return "", false
	}
	offset := fmt.Sprintf("%02d", h)
	if m != 0 {
		offset += fmt.Sprintf(":%02d", m)
	}
	if h == 0 && m == 0 {
		sign = "+"
	}
	back := "-"
	if sign == "-" {
		back = "+"
	}
	return "<" + sign + offset + ">" + back + offset, true
}
