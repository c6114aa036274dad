package parser

import "fmt"

// SyntaxError is SQL the dialect's parser rejects. Msg is the parser's own
// message (a MySQL client shows it with error 1064, psql with 42601).
type SyntaxError struct {
	Msg string
	// Position is where the error is, as a 1-based character (not byte)
	// offset into the statement, as PostgreSQL's ErrorResponse reports it
	// (field P); 0 when the parser gives none.
	Position int
}

func (e *SyntaxError) Error() string { return e.Msg }

// UnsupportedError is SQL that parses but that dpproxy does not handle.
// What names the construct ("multi-statements", "SELECT ... INTO OUTFILE").
type UnsupportedError struct {
	What string
}

func (e *UnsupportedError) Error() string { return fmt.Sprintf("unsupported SQL: %s", e.What) }
