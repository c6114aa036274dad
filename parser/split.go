package parser

import (
	"strings"
	"unicode/utf8"

	pgquery "github.com/pganalyze/pg_query_go/v6"
)

// SplitPG cuts the text of a PostgreSQL simple Query message into its
// statements, as PostgreSQL's exec_simple_query does before it runs them
// one by one: with PostgreSQL's own parser (pg_query's SplitWithParser),
// so that a ';' inside a string constant, a quoted identifier, a dollar
// quote or a comment does not cut, and empty statements (";;", a piece
// with only a comment) are dropped. No statement at all (nil) is answered
// with EmptyQueryResponse.
//
// PostgreSQL parses the whole text before running any of it: a syntax
// error anywhere runs nothing. SplitPG keeps that: when the text does not
// parse, it returns the text whole (one piece), and Parse reports the
// error with its position in the whole text. dpproxy's own statements
// (SHOW PRIVACY BUDGET, TRAIN PRIVATE ...) are not PostgreSQL's: a text
// with one of them is cut with pgLexer (which follows PostgreSQL's
// scanner), and the other pieces are checked by PostgreSQL's parser
// before anything runs, with the dpproxy statements blanked out so that
// error positions stay those of the whole text. A syntax error inside a
// dpproxy statement is found when that statement's turn comes.
//
// Text that the parser cannot safely see (a NUL byte, nesting over
// MaxNesting) is returned whole, so that Parse refuses it as it always has.
func SplitPG(sql string) ([]string, error) {
	if strings.IndexByte(sql, 0) >= 0 || checkNesting(sql, PostgreSQL) != nil {
		return []string{sql}, nil
	}
	// pgLexer cuts where PostgreSQL's scanner does, in linear time: text
	// of one statement (the common case) is not parsed twice.
	pieces := pgLexSplit(sql)
	switch len(pieces) {
	case 0:
		return nil, nil
	case 1:
		return []string{sql}, nil
	}
	parts, err := pgquery.SplitWithParser(sql, true)
	if err == nil {
		if len(parts) <= 1 {
			return []string{sql}, nil // let Parse judge it, as before
		}
		return parts, nil
	}
	// Blank out dpproxy's statements, one space per character: the
	// parser's error positions count characters.
	var masked strings.Builder
	dp, last := false, 0
	for _, p := range pieces {
		if isDPStatement(sql[p[0]:p[1]]) {
			dp = true
			masked.WriteString(sql[last:p[0]])
			masked.WriteString(strings.Repeat(" ", utf8.RuneCountInString(sql[p[0]:p[1]])))
			last = p[1]
		}
	}
	masked.WriteString(sql[last:])
	if !dp {
		return []string{sql}, nil
	}
	if _, err := pgquery.SplitWithParser(masked.String(), true); err != nil {
		return nil, pgSyntaxError(err)
	}
	out := make([]string, len(pieces))
	for i, p := range pieces {
		out[i] = strings.TrimSpace(sql[p[0]:p[1]])
	}
	return out, nil
}

// pgLexSplit returns the byte ranges of the statements of sql, cut at each
// ';' outside parentheses, without the ';' and without the pieces that
// hold no token (only white space and comments).
func pgLexSplit(sql string) [][2]int {
	var out [][2]int
	l := pgLexer{src: sql}
	start, depth, tokens := 0, 0, 0
	for {
		t := l.next()
		if t.kind == pgTokEOF {
			if tokens > 0 {
				out = append(out, [2]int{start, len(sql)})
			}
			return out
		}
		if t.kind == pgTokPunct {
			switch sql[t.start] {
			case '(', '[':
				depth++
			case ')', ']':
				if depth > 0 {
					depth--
				}
			case ';':
				if depth == 0 {
					if tokens > 0 {
						out = append(out, [2]int{start, t.start})
					}
					start, tokens = t.end, 0
					continue
				}
			}
		}
		tokens++
	}
}

// pgBlank reports text with no token: only white space and comments.
func pgBlank(sql string) bool {
	l := pgLexer{src: sql}
	return l.next().kind == pgTokEOF
}
