package parser

import (
	"strconv"
	"strings"
)

// pgLexer splits PostgreSQL SQL into tokens, just finely enough for the
// things pg_query's tree does not give: where a select item's text ends (the
// tree has only start offsets), how many $n parameters a statement
// declares, and the nesting bound (nesting.go), which it reads before
// pg_query sees the text. It need not diagnose errors (pg_query does), but
// it must cut valid text where PostgreSQL does; its rules follow
// PostgreSQL's scanner (scan.l):
// nested /* */ comments, doubled quotes inside quotes, backslash escapes in
// E'...' strings, quoted identifiers, $tag$ dollar quoting, and identifiers
// that may contain '$'.
type pgLexer struct {
	src string
	pos int
}

type pgTokKind int

const (
	pgTokEOF pgTokKind = iota
	pgTokWord
	pgTokQuoted // "identifier" or a string constant
	pgTokNumber
	pgTokParam // $n
	pgTokPunct // any other single character
)

type pgToken struct {
	kind       pgTokKind
	start, end int
}

func (t pgToken) text(src string) string { return src[t.start:t.end] }

func isPGIdentStart(c byte) bool {
	return c == '_' || c >= 0x80 || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

func isPGIdentChar(c byte) bool {
	return isPGIdentStart(c) || c == '$' || (c >= '0' && c <= '9')
}

func isPGDigit(c byte) bool { return c >= '0' && c <= '9' }

// next returns the next token, skipping whitespace and comments.
func (l *pgLexer) next() pgToken {
	l.skipSpace()
	src, start := l.src, l.pos
	if start >= len(src) {
		return pgToken{kind: pgTokEOF, start: start, end: start}
	}
	c := src[start]
	switch {
	case c == '\'':
		l.pos = l.quoted(start+1, '\'', false)
		return pgToken{pgTokQuoted, start, l.pos}
	case c == '"':
		l.pos = l.quoted(start+1, '"', false)
		return pgToken{pgTokQuoted, start, l.pos}
	case c == '$':
		return l.dollar(start)
	case isPGDigit(c) || (c == '.' && start+1 < len(src) && isPGDigit(src[start+1])):
		i := start + 1
		for i < len(src) && (isPGIdentChar(src[i]) || src[i] == '.') && src[i] != '$' {
			i++
		}
		l.pos = i
		return pgToken{pgTokNumber, start, i}
	case isPGIdentStart(c):
		i := start + 1
		for i < len(src) && isPGIdentChar(src[i]) {
			i++
		}
		// A one-letter prefix glued to a quote is part of the constant:
		// E'...' (backslash escapes), B'...', X'...', N'...'; U&'...' and U&"...".
		if i == start+1 && i < len(src) {
			switch c | 0x20 {
			case 'e':
				if src[i] == '\'' {
					l.pos = l.quoted(i+1, '\'', true)
					return pgToken{pgTokQuoted, start, l.pos}
				}
			case 'b', 'x', 'n':
				if src[i] == '\'' {
					l.pos = l.quoted(i+1, '\'', false)
					return pgToken{pgTokQuoted, start, l.pos}
				}
			case 'u':
				if i+1 < len(src) && src[i] == '&' && (src[i+1] == '\'' || src[i+1] == '"') {
					l.pos = l.quoted(i+2, src[i+1], false)
					return pgToken{pgTokQuoted, start, l.pos}
				}
			}
		}
		l.pos = i
		return pgToken{pgTokWord, start, i}
	}
	l.pos = start + 1
	return pgToken{pgTokPunct, start, start + 1}
}

func (l *pgLexer) skipSpace() {
	src := l.src
	for l.pos < len(src) {
		switch c := src[l.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.pos++
		case c == '-' && l.pos+1 < len(src) && src[l.pos+1] == '-':
			nl := strings.IndexByte(src[l.pos:], '\n')
			if nl < 0 {
				l.pos = len(src)
				return
			}
			l.pos += nl + 1
		case c == '/' && l.pos+1 < len(src) && src[l.pos+1] == '*':
			// PostgreSQL's block comments nest.
			depth := 0
			i := l.pos
			for i < len(src) {
				if src[i] == '/' && i+1 < len(src) && src[i+1] == '*' {
					depth++
					i += 2
				} else if src[i] == '*' && i+1 < len(src) && src[i+1] == '/' {
					depth--
					i += 2
					if depth == 0 {
						break
					}
				} else {
					i++
				}
			}
			l.pos = i
		default:
			return
		}
	}
}

// quoted returns the offset just past the closing quote q of a constant or
// identifier whose body starts at i. A doubled quote is part of the body;
// with backslashes set (E'...'), a backslash escapes the next byte.
func (l *pgLexer) quoted(i int, q byte, backslashes bool) int {
	return quotedEnd(l.src, i, q, backslashes)
}

// quotedEnd is the offset just past the closing quote q of a quoted text of
// src whose body starts at i, as PostgreSQL's and TiDB's scanners read it: a
// doubled quote stands for itself; with backslashes set, a backslash escapes
// the next byte. Unterminated text runs to the end of src.
func quotedEnd(src string, i int, q byte, backslashes bool) int {
	for i < len(src) {
		switch src[i] {
		case '\\':
			if backslashes {
				i += 2
				continue
			}
		case q:
			if i+1 < len(src) && src[i+1] == q {
				i += 2
				continue
			}
			return i + 1
		}
		i++
	}
	return len(src)
}

// dollar scans what starts with '$': a parameter $n or a dollar-quoted
// string $tag$...$tag$ (a tag cannot start with a digit).
func (l *pgLexer) dollar(start int) pgToken {
	src := l.src
	i := start + 1
	if i < len(src) && isPGDigit(src[i]) {
		for i < len(src) && isPGDigit(src[i]) {
			i++
		}
		l.pos = i
		return pgToken{pgTokParam, start, i}
	}
	for i < len(src) && isPGIdentChar(src[i]) && src[i] != '$' {
		i++
	}
	if i < len(src) && src[i] == '$' {
		tag := src[start : i+1]
		if end := strings.Index(src[i+1:], tag); end >= 0 {
			l.pos = i + 1 + end + len(tag)
		} else {
			l.pos = len(src)
		}
		return pgToken{pgTokQuoted, start, l.pos}
	}
	l.pos = start + 1
	return pgToken{pgTokPunct, start, start + 1}
}

// pgParamCount returns the highest $n in sql: PostgreSQL numbers a
// statement's parameters by the highest one it references.
func pgParamCount(sql string) int {
	if strings.IndexByte(sql, '$') < 0 {
		return 0
	}
	l := pgLexer{src: sql}
	n := 0
	for {
		t := l.next()
		if t.kind == pgTokEOF {
			return n
		}
		if t.kind == pgTokParam {
			if v, err := strconv.Atoi(sql[t.start+1 : t.end]); err == nil && v > n {
				n = v
			}
		}
	}
}

// pgItemEnds are the keywords that end a select list (the clauses that may
// follow it). Inside an item they can only appear within parentheses, with
// the exceptions pgItemText handles.
var pgItemEnds = map[string]bool{
	"FROM": true, "INTO": true, "WHERE": true, "GROUP": true, "HAVING": true,
	"WINDOW": true, "ORDER": true, "LIMIT": true, "OFFSET": true, "FETCH": true,
	"FOR": true, "UNION": true, "INTERSECT": true, "EXCEPT": true,
}

// pgItemText returns the text of the select item that starts at byte offset
// start: up to the comma, closing parenthesis or clause keyword that ends it,
// alias included (as MySQL's OriginalText has it).
func pgItemText(sql string, start int) string {
	if start < 0 || start >= len(sql) {
		return ""
	}
	l := pgLexer{src: sql, pos: start}
	depth, end := 0, start
	var prev string // the previous word, upper case
	for {
		t := l.next()
		switch t.kind {
		case pgTokEOF:
			return sql[start:end]
		case pgTokPunct:
			switch sql[t.start] {
			case '(', '[':
				depth++
			case ')', ']':
				if depth == 0 {
					return sql[start:end]
				}
				depth--
			case ',', ';':
				if depth == 0 {
					return sql[start:end]
				}
			}
			prev = ""
		case pgTokWord:
			word := strings.ToUpper(t.text(sql))
			// IS [NOT] DISTINCT FROM and WITHIN GROUP stay inside the item;
			// after AS any word is the alias.
			if depth == 0 && pgItemEnds[word] && prev != "AS" &&
				!(word == "FROM" && prev == "DISTINCT") && !(word == "GROUP" && prev == "WITHIN") {
				return sql[start:end]
			}
			prev = word
		default:
			prev = ""
		}
		end = t.end
	}
}
