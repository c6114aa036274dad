package pgcatalog

import "fmt"

// RefusedError is a catalog query dpproxy will not answer because the
// answer could reveal row data or statistics of private tables, other
// sessions' activity, or run SQL. PostgreSQL clients get SQLSTATE 42501.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return "refused: " + e.Reason }

// SQLState is insufficient_privilege.
func (*RefusedError) SQLState() string { return "42501" }

func refused(format string, args ...any) error {
	return &RefusedError{Reason: fmt.Sprintf(format, args...)}
}

// UndefinedTableError is a relation that is neither emulated nor a table
// of the policy (SQLSTATE 42P01, PostgreSQL's wording).
type UndefinedTableError struct{ Name string }

func (e *UndefinedTableError) Error() string {
	return fmt.Sprintf("relation %q does not exist", e.Name)
}

// SQLState is undefined_table.
func (*UndefinedTableError) SQLState() string { return "42P01" }

// UnknownSettingError is a setting SHOW or current_setting() does not
// know (SQLSTATE 42704, PostgreSQL's wording).
type UnknownSettingError struct{ Name string }

func (e *UnknownSettingError) Error() string {
	return fmt.Sprintf("unrecognized configuration parameter %q", e.Name)
}

// SQLState is undefined_object.
func (*UnknownSettingError) SQLState() string { return "42704" }

// UnsupportedError is a construct the emulation cannot run (SQLSTATE
// 0A000, feature_not_supported).
type UnsupportedError struct{ What string }

func (e *UnsupportedError) Error() string { return e.What + " is not supported in catalog queries" }

// SQLState is feature_not_supported.
func (*UnsupportedError) SQLState() string { return "0A000" }

// LimitError is a catalog query stopped by one of the limits on its work
// (MaxQueryTime, MaxRows, MaxValueBytes, MaxResultBytes).
type LimitError struct {
	What    string
	Timeout bool // the deadline, rather than a size
}

func (e *LimitError) Error() string { return e.What + "; the catalog answers no more" }

// SQLState is PostgreSQL's query_canceled for the deadline (what
// statement_timeout reports) and program_limit_exceeded for a size.
func (e *LimitError) SQLState() string {
	if e.Timeout {
		return "57014"
	}
	return "54000"
}
