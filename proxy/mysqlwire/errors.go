package mysqlwire

import (
	"context"
	"errors"

	"vitess.io/vitess/go/mysql/sqlerror"

	"github.com/dpproxy/dpproxy/proxy"
)

// SQLStateBudget is the SQLSTATE dpproxy sends with error 1227 when a query
// would exceed the user's privacy budget. It is dpproxy-specific: SQLSTATE
// class "DP" is not used by MySQL, so clients can tell an exhausted budget
// (retrying will not help until the DBA grants more) from an ordinary
// privacy refusal (42000, rephrase the query).
const SQLStateBudget = "DP001"

// mysqlError is the MySQL error number and SQLSTATE for one engine Code.
type mysqlError struct {
	num   sqlerror.ErrorCode
	state string
}

// errorTable maps the engine's error classes to MySQL errors. Numbers and
// states are MySQL's own (https://dev.mysql.com/doc/mysql-errors/8.0/en/server-error-reference.html)
// so that client libraries classify them as they would a real server's.
var errorTable = map[proxy.Code]mysqlError{
	proxy.CodeInternal:           {sqlerror.ERUnknownError, sqlerror.SSUnknownSQLState},
	proxy.CodeSyntax:             {sqlerror.ERParseError, sqlerror.SSClientError},
	proxy.CodeUnsupported:        {sqlerror.ERNotSupportedYet, sqlerror.SSClientError},
	proxy.CodeRefused:            {sqlerror.ERSpecifiedAccessDenied, sqlerror.SSClientError},
	proxy.CodeBudget:             {sqlerror.ERSpecifiedAccessDenied, SQLStateBudget},
	proxy.CodeUnknownTable:       {sqlerror.ERNoSuchTable, sqlerror.SSUnknownTable},
	proxy.CodeUnknownColumn:      {sqlerror.ERBadFieldError, sqlerror.SSBadFieldError},
	proxy.CodeUnknownDB:          {sqlerror.ERBadDb, sqlerror.SSClientError},
	proxy.CodePermission:         {sqlerror.ERSpecifiedAccessDenied, sqlerror.SSClientError},
	proxy.CodeBadValue:           {sqlerror.ERWrongValueForVar, sqlerror.SSClientError},
	proxy.CodeBackend:            {sqlerror.ERUnknownError, sqlerror.SSUnknownSQLState},
	proxy.CodeTimeout:            {sqlerror.ERQueryTimeout, sqlerror.SSUnknownSQLState},
	proxy.CodeAuth:               {sqlerror.ERAccessDeniedError, sqlerror.SSAccessDeniedError},
	proxy.CodeTooManyConnections: {sqlerror.ERConCount, sqlStateConnRejected},
	proxy.CodeCanceled:           {sqlerror.ERQueryInterrupted, sqlerror.SSQueryInterrupted},
}

// sqlStateConnRejected is SQLSTATE 08004, "server rejected the connection",
// which MySQL sends with ER_CON_COUNT_ERROR (1040).
const sqlStateConnRejected = "08004"

// toSQLError turns an error from the engine into the MySQL error the client
// sees. An *proxy.Error keeps its message; a context error from the
// statement's deadline or cancellation becomes 3024 or 1317; anything else
// is 1105 with its text, since the engine is expected to classify every
// error a user can act on.
func toSQLError(err error) *sqlerror.SQLError {
	if err == nil {
		return nil
	}
	var se *sqlerror.SQLError
	if errors.As(err, &se) {
		return se
	}
	var pe *proxy.Error
	if errors.As(err, &pe) {
		me, ok := errorTable[pe.Code]
		if !ok {
			me = errorTable[proxy.CodeInternal]
		}
		return sqlerror.NewSQLError(me.num, me.state, pe.Msg)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return sqlerror.NewSQLError(sqlerror.ERQueryTimeout, sqlerror.SSUnknownSQLState,
			"Query execution was interrupted, maximum statement execution time exceeded")
	case errors.Is(err, context.Canceled):
		return sqlerror.NewSQLError(sqlerror.ERQueryInterrupted, sqlerror.SSQueryInterrupted,
			"Query execution was interrupted")
	}
	return sqlerror.NewSQLError(sqlerror.ERUnknownError, sqlerror.SSUnknownSQLState, err.Error())
}

// errInternal is what a client sees when the engine panicked.
var errInternal = sqlerror.NewSQLError(sqlerror.ERUnknownError, sqlerror.SSUnknownSQLState, "internal error")

// errTooManyConnections is MySQL's answer when max_connections is reached.
var errTooManyConnections = sqlerror.NewSQLError(sqlerror.ERConCount, sqlStateConnRejected, "Too many connections")

// errHandshakeTimeout (ER_HANDSHAKE_ERROR 1043) refuses a login that completed after the handshake
// deadline had closed the connection (the client will not read it).
var errHandshakeTimeout = sqlerror.NewSQLError(sqlerror.ErrorCode(1043), sqlerror.SSNetError, "Bad handshake: timed out")
