package parser

// Parse parses exactly one statement of dialect d. A trailing ';' is fine;
// more than one statement is an *UnsupportedError ("multi-statements"). It
// returns the statement and the number of placeholders ("?") it contains.
//
// dpproxy's own statements (SHOW PRIVACY BUDGET, ...) are recognised first by
// their leading keywords and parsed by dpproxy's grammar; everything else goes
// to the dialect's parser. Syntax errors are *SyntaxError carrying the
// parser's own message; SQL that parses but that dpproxy cannot represent is
// *UnsupportedError.
func Parse(sql string, d Dialect) (Statement, int, error) {
	if stmt, ok, err := parseDPStatement(sql, d); ok {
		if err != nil {
			return nil, 0, err
		}
		return stmt, 0, nil
	}
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
