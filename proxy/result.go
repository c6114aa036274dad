package proxy

import "fmt"

// ColumnType is the type of a result column, as both front doors encode it.
type ColumnType int

const (
	TypeInt ColumnType = iota
	TypeFloat
	TypeString
	TypeNull
	TypeDate
	TypeDateTime
)

// Column describes one result column.
type Column struct {
	Name string
	Type ColumnType
	// Table and Schema are set for columns that come straight from a table
	// (DESCRIBE, catalog reads); empty for computed ones.
	Table  string
	Schema string
}

// Value is one cell: nil (NULL), int64, float64, string or []byte. Dates are
// strings in ISO form.
type Value = any

// Result is what one statement returns: either rows (Columns non-nil) or an
// OK with AffectedRows and an optional Info message.
type Result struct {
	Columns      []Column
	Rows         [][]Value
	AffectedRows uint64
	Info         string
	// Warnings are shown by SHOW WARNINGS / psql NOTICEs.
	Warnings []string
}

// Code classifies an error so each front door can map it to its own error
// number and SQLSTATE.
type Code int

const (
	CodeInternal           Code = iota
	CodeSyntax                  // MySQL 1064, SQLSTATE 42601
	CodeUnsupported             // MySQL 1235, SQLSTATE 0A000
	CodeRefused                 // privacy refusal: MySQL 1227, SQLSTATE 42501
	CodeBudget                  // over budget: MySQL 1227 with dpproxy SQLSTATE DP001
	CodeUnknownTable            // MySQL 1146, SQLSTATE 42P01
	CodeUnknownColumn           // MySQL 1054, SQLSTATE 42703
	CodeUnknownDB               // MySQL 1049, SQLSTATE 3D000
	CodePermission              // admin statement by a non-admin: MySQL 1227, SQLSTATE 42501
	CodeBadValue                // bad SET value: MySQL 1231, SQLSTATE 22023
	CodeBackend                 // backend failed or unreachable: MySQL 2013/1105, SQLSTATE 08006/XX000
	CodeTimeout                 // query timeout: MySQL 3024, SQLSTATE 57014
	CodeAuth                    // wrong user or password: MySQL 1045, SQLSTATE 28P01
	CodeTooManyConnections      // MySQL 1040, SQLSTATE 53300
	CodeCanceled                // query canceled by the client: MySQL 1317, SQLSTATE 57014
)

// Error is an error the engine returns to a client.
type Error struct {
	Code Code
	Msg  string
	Err  error // the cause, if any (not shown to clients beyond Msg)
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Prepared is a statement prepared by a client (COM_STMT_PREPARE, Parse).
// Columns is nil when the result shape is only known at execution.
type Prepared struct {
	SQL        string
	ParamCount int
	Columns    []Column
	parsed     *parsed // owned by the engine
}
