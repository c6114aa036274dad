package parser

// Parse parses exactly one statement of dialect d. A trailing ';' is fine;
// more than one statement is an *UnsupportedError ("multi-statements"). It
// returns the statement and the number of placeholders ("?") it contains.
//
// dpproxy's own statements (SHOW PRIVACY BUDGET, ...) are recognised first by
// their leading keywords and parsed by dpproxy's grammar; everything else goes
// to the dialect's parser. Syntax errors are *SyntaxError carrying the
// parser's own message; SQL that parses but that dpproxy cannot represent is
// *UnsupportedError, and so is a statement that nests expressions more
// than MaxNesting levels deep, refused before any parser sees it.
func Parse(sql string, d Dialect) (Statement, int, error) {
	if err := checkNesting(sql, d); err != nil {
		return nil, 0, err
	}
	if stmt, ok, err := parseDPStatement(sql, d); ok {
		if err != nil {
			return nil, 0, err
		}
		return stmt, 0, nil
	}
	return parseDialect(sql, d)
}

// parseEmbedded parses a query that one of dpproxy's statements embeds (the
// query of EXPLAIN PRIVACY, TRAIN's ON (...) and LABEL). It is checked on
// its own, as it may be cut from the statement where its lexer and the
// dialect's disagree, and it is never itself one of dpproxy's statements,
// so that they do not nest: ok is false for text that starts like one.
func parseEmbedded(sql string, d Dialect) (stmt Statement, params int, ok bool, err error) {
	if err := checkNesting(sql, d); err != nil {
		return nil, 0, true, err
	}
	if isDPStatement(sql) {
		return nil, 0, false, nil
	}
	stmt, params, err = parseDialect(sql, d)
	return stmt, params, true, err
}

// parseDialect parses sql with the dialect's parser.
func parseDialect(sql string, d Dialect) (Statement, int, error) {
	switch d {
	case MySQL:
		return parseMySQL(sql)
	case PostgreSQL:
		return parsePG(sql)
	}
	return nil, 0, &UnsupportedError{What: "the " + d.String() + " dialect"}
}

// Fingerprint returns a normalised form of sql for the ledger and the answer
// cache: literals are replaced by '?', whitespace, comments and keyword case
// are normalised, so that "SELECT COUNT(*) FROM t WHERE a = 1" and
// "select count(*)  from t where a=2" share one fingerprint. For PostgreSQL
// it is pg_query's fingerprint of the parse tree, a hex hash.
func Fingerprint(sql string, d Dialect) string {
	if d == PostgreSQL {
		return fingerprintPG(sql)
	}
	return fingerprintMySQL(sql)
}
