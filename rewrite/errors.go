package rewrite

import (
	"fmt"

	"github.com/dpproxy/dpproxy/parser"
)

// RefusedError is a query dpproxy will not answer because it could reveal
// more than the policy allows. Reason says why, as a sentence for the analyst.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return "refused: " + e.Reason }

// UnknownTableError names a table neither the policy nor the backend has.
type UnknownTableError struct{ Table string }

func (e *UnknownTableError) Error() string { return fmt.Sprintf("table '%s' doesn't exist", e.Table) }

// UnknownColumnError names a column the table does not have.
type UnknownColumnError struct{ Column, Table string }

func (e *UnknownColumnError) Error() string {
	return fmt.Sprintf("unknown column '%s' in table '%s'", e.Column, e.Table)
}

func refuse(format string, args ...any) error {
	return &RefusedError{Reason: fmt.Sprintf(format, args...)}
}

func unsupported(format string, args ...any) error {
	return &parser.UnsupportedError{What: fmt.Sprintf(format, args...)}
}
