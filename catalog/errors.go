package catalog

import "fmt"

// RefusedError is a metadata request dpproxy will not answer because the
// answer would reveal something about other sessions or about private data.
// The engine reports it like a privacy refusal (MySQL 1227, SQLSTATE 42501).
type RefusedError struct {
	Reason string
}

func (e *RefusedError) Error() string { return e.Reason }

// UnknownTableError is a table that is not in the catalog: absent from the
// backend, or not listed in the policy (both look the same to a client, so
// that the error does not reveal which tables exist behind the proxy).
// MySQL reports it as error 1146.
type UnknownTableError struct {
	DB    string
	Table string
}

func (e *UnknownTableError) Error() string {
	return fmt.Sprintf("Table '%s.%s' doesn't exist", e.DB, e.Table)
}

// UnknownDBError is a database other than the catalog's own and
// information_schema (MySQL error 1049).
type UnknownDBError struct {
	DB string
}

func (e *UnknownDBError) Error() string { return fmt.Sprintf("Unknown database '%s'", e.DB) }

// NoDatabaseError is a statement that needs a default database when the
// session has none (MySQL error 1046).
type NoDatabaseError struct{}

func (*NoDatabaseError) Error() string { return "No database selected" }

// UnknownVariableError is a system variable dpproxy does not know (MySQL
// error 1193).
type UnknownVariableError struct {
	Name string
}

func (e *UnknownVariableError) Error() string {
	return fmt.Sprintf("Unknown system variable '%s'", e.Name)
}
