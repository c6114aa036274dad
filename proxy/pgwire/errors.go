package pgwire

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/dpproxy/dpproxy/proxy"
)

// SQLStateBudget is the SQLSTATE of an answer refused because it would
// exceed the user's privacy budget. It is dpproxy's own and the same as the
// MySQL front door's: class "DP" is not used by PostgreSQL (whose classes
// are digits and capital letters, see Appendix A of its manual), so a
// client can tell an exhausted budget (waiting or rephrasing will not help
// until the DBA grants more) from a privacy refusal (42501). Drivers accept
// any five-character SQLSTATE: psql shows it, psycopg raises
// DatabaseError, pgjdbc and pgx carry it in the exception.
const SQLStateBudget = "DP001"

// SQLSTATEs used by this package, from Appendix A of the PostgreSQL manual.
const (
	stateSyntax           = "42601" // syntax_error
	stateUnsupported      = "0A000" // feature_not_supported
	stateInsufficientPriv = "42501" // insufficient_privilege
	stateUndefinedTable   = "42P01" // undefined_table
	stateUndefinedColumn  = "42703" // undefined_column
	stateInvalidCatalog   = "3D000" // invalid_catalog_name
	stateInvalidParameter = "22023" // invalid_parameter_value
	stateSystemError      = "58000" // system_error: the backend failed
	stateQueryCanceled    = "57014" // query_canceled (timeout and cancel)
	stateInvalidPassword  = "28P01" // invalid_password
	stateTooManyConns     = "53300" // too_many_connections
	stateInternal         = "XX000" // internal_error
	stateProtocol         = "08P01" // protocol_violation
	stateInvalidText      = "22P02" // invalid_text_representation
	stateInvalidBinary    = "22P03" // invalid_binary_representation
	stateUndefinedStmt    = "26000" // invalid_sql_statement_name
	stateUndefinedCursor  = "34000" // invalid_cursor_name
	stateDuplicateStmt    = "42P05" // duplicate_prepared_statement
	stateDuplicateCursor  = "42P03" // duplicate_cursor
	stateWarning          = "01000" // warning
)

// stateOf maps the engine's error classes to SQLSTATEs.
var stateOf = map[proxy.Code]string{
	proxy.CodeInternal:           stateInternal,
	proxy.CodeSyntax:             stateSyntax,
	proxy.CodeUnsupported:        stateUnsupported,
	proxy.CodeRefused:            stateInsufficientPriv,
	proxy.CodeBudget:             SQLStateBudget,
	proxy.CodeUnknownTable:       stateUndefinedTable,
	proxy.CodeUnknownColumn:      stateUndefinedColumn,
	proxy.CodeUnknownDB:          stateInvalidCatalog,
	proxy.CodePermission:         stateInsufficientPriv,
	proxy.CodeBadValue:           stateInvalidParameter,
	proxy.CodeBackend:            stateSystemError,
	proxy.CodeTimeout:            stateQueryCanceled,
	proxy.CodeAuth:               stateInvalidPassword,
	proxy.CodeTooManyConnections: stateTooManyConns,
	proxy.CodeCanceled:           stateQueryCanceled,
}

// pgError is an error as the client sees it.
type pgError struct {
	state string
	msg   string
	// fatal errors end the connection after they are sent.
	fatal bool
}

func (e *pgError) Error() string { return e.state + ": " + e.msg }

func errorf(state, format string, args ...any) *pgError {
	return &pgError{state: state, msg: fmt.Sprintf(format, args...)}
}

func fatalf(state, format string, args ...any) *pgError {
	return &pgError{state: state, msg: fmt.Sprintf(format, args...), fatal: true}
}

// toPGError turns an error from the engine into what the client sees. An
// *proxy.Error keeps its message; the statement's own deadline and a
// CancelRequest become 57014 with PostgreSQL's messages; anything else is
// XX000 with its text, since the engine classifies every error a user can
// act on.
func toPGError(err error) *pgError {
	var pe *pgError
	if errors.As(err, &pe) {
		return pe
	}
	var ee *proxy.Error
	if errors.As(err, &ee) {
		state, ok := stateOf[ee.Code]
		if !ok {
			state = stateInternal
		}
		return &pgError{state: state, msg: ee.Msg}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return errorf(stateQueryCanceled, "canceling statement due to statement timeout")
	case errors.Is(err, context.Canceled):
		return errorf(stateQueryCanceled, "canceling statement due to user request")
	}
	return errorf(stateInternal, "%s", err.Error())
}

// message is the ErrorResponse for e.
func (e *pgError) message() *pgproto3.ErrorResponse {
	sev := "ERROR"
	if e.fatal {
		sev = "FATAL"
	}
	return &pgproto3.ErrorResponse{Severity: sev, SeverityUnlocalized: sev, Code: e.state, Message: e.msg}
}

// errInternal is what a client sees when the engine panicked.
var errInternal = errorf(stateInternal, "internal error in dpproxy (logged); the connection goes on")
