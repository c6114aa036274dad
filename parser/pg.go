package parser

import (
	"errors"
	"strings"
	"unicode/utf8"

	pgquery "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"
)

// parsePG parses one PostgreSQL statement with PostgreSQL's own grammar
// (libpg_query, through pg_query_go's protobuf tree) and converts it into
// the model.
func parsePG(sql string) (Statement, int, error) {
	if i := strings.IndexByte(sql, 0); i >= 0 {
		// The C parser would stop at the NUL and parse only the text
		// before it. PostgreSQL itself never sees one: protocol strings
		// are NUL-terminated, and UTF8 has no 0x00 character.
		return nil, 0, &SyntaxError{
			Msg:      `invalid byte sequence for encoding "UTF8": 0x00`,
			Position: utf8.RuneCountInString(sql[:i]) + 1,
		}
	}
	tree, err := pgquery.Parse(sql)
	if err != nil {
		return nil, 0, pgSyntaxError(err)
	}
	switch len(tree.Stmts) {
	case 0:
		return &Empty{}, 0, nil
	case 1:
	default:
		return nil, 0, &UnsupportedError{What: "multi-statements"}
	}
	c := pgConverter{sql: sql}
	stmt, err := c.stmt(tree.Stmts[0].Stmt)
	if err != nil {
		return nil, 0, err
	}
	return stmt, pgParamCount(sql), nil
}

// pgSyntaxError keeps PostgreSQL's message ("syntax error at or near
// \"FROM\"") and its cursor position, which psql uses to point at the
// error.
func pgSyntaxError(err error) error {
	var perr *pgparser.Error
	if errors.As(err, &perr) {
		return &SyntaxError{Msg: perr.Message, Position: perr.Cursorpos}
	}
	// The protobuf tree did not decode: in practice a statement nested
	// deeper than the decoder's recursion limit.
	return &SyntaxError{Msg: "statement cannot be parsed: " + err.Error()}
}

// fingerprintPG uses pg_query's fingerprint, which hashes the parse tree
// without constants, parameter numbers, aliases, comments or whitespace:
// "SELECT COUNT(*) FROM t WHERE a = 1" and "select count(*)  from t where
// a=2" share one. Text that does not parse (it never reaches the ledger)
// is its own fingerprint.
func fingerprintPG(sql string) string {
	if checkNesting(sql, PostgreSQL) != nil {
		return sql // libpg_query recurses on the tree it builds
	}
	fp, err := pgquery.Fingerprint(sql)
	if err != nil {
		return sql
	}
	return fp
}
