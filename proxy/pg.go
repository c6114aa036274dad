package proxy

import (
	"context"
	"strings"

	"github.com/dpproxy/dpproxy/parser"
)

// PostgresVersion is the server_version PostgreSQL clients see: a version
// whose catalog and protocol they know, marked as dpproxy.
const PostgresVersion = pgServerVersion + " (dpproxy)"

// NewPGSession opens a session for a PostgreSQL client. database is the
// startup packet's (psql sends the user name when none is given); it must be
// the database dpproxy serves. params are the startup parameters
// (application_name, client_encoding, ...), kept as session settings.
func (e *Engine) NewPGSession(ctx context.Context, user, database string, params map[string]string) (*Session, error) {
	if database != "" && !e.servesDatabase(database) {
		return nil, Errorf(CodeUnknownDB, "database \"%s\" does not exist (dpproxy serves \"%s\")", database, e.database)
	}
	s, err := e.NewSession(ctx, user, e.database, parser.PostgreSQL)
	if err != nil {
		return nil, err
	}
	for k, v := range params {
		switch k {
		case "user", "database", "options", "replication":
			continue
		}
		s.vars[strings.ToLower(k)] = v
	}
	return s, nil
}

// commandTag is the PostgreSQL command tag of a statement that returns no
// rows; the PostgreSQL door sends it in CommandComplete (the MySQL door
// ignores it).
func commandTag(st parser.Statement) string {
	switch st := st.(type) {
	case *parser.Set, *parser.SetPrivacyBudget:
		return "SET"
	case *parser.Reset, *parser.ResetPrivacyBudget:
		return "RESET"
	case *parser.Discard:
		return "DISCARD ALL"
	case *parser.Deallocate:
		return "DEALLOCATE"
	case *parser.Use:
		return "SET"
	case *parser.Transaction:
		switch st.Kind {
		case parser.TxBegin:
			return "BEGIN"
		case parser.TxCommit:
			return "COMMIT"
		}
		return "ROLLBACK"
	}
	return ""
}
