package parser

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// dpproxy's own statements are lexed by this small scanner: identifiers
// (plain or `quoted`), numbers, 'single' or "double" quoted strings, and
// one-character punctuation. Blanks and comments (/* */, -- , #) separate
// tokens; MySQL's versioned comments (/*! ... */) are comments here too.

type dpTokenKind int

const (
	dpEOF dpTokenKind = iota
	dpIdent
	dpQuotedIdent
	dpNumber
	dpString
	dpPunct
)

type dpToken struct {
	kind dpTokenKind
	text string // identifier or number as typed, string contents unquoted
	pos  int    // byte offset in the statement
}

// keyword reports whether t is the unquoted identifier kw (case-insensitive).
func (t dpToken) keyword(kw string) bool {
	return t.kind == dpIdent && strings.EqualFold(t.text, kw)
}

// maxDescribed bounds the text of a token in an error message.
const maxDescribed = 64

// describe renders t for an error message, a long token cut short.
func (t dpToken) describe() string {
	text := t.text
	if len(text) > maxDescribed {
		cut := maxDescribed
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "..."
	}
	switch t.kind {
	case dpEOF:
		return "end of statement"
	case dpString:
		return fmt.Sprintf("'%s'", text)
	case dpQuotedIdent:
		return fmt.Sprintf("`%s`", text)
	}
	return fmt.Sprintf("%q", text)
}

type dpLexer struct {
	src string
	pos int
}

// next returns the next token, or an error for an unterminated string,
// quoted identifier or comment.
func (l *dpLexer) next() (dpToken, error) {
	if err := l.skipBlanks(); err != nil {
		return dpToken{}, err
	}
	start := l.pos
	if l.pos >= len(l.src) {
		return dpToken{kind: dpEOF, pos: start}, nil
	}
	c := l.src[l.pos]
	switch {
	case isDPIdentStart(c):
		for l.pos < len(l.src) && isDPIdentPart(l.src[l.pos]) {
			l.pos++
		}
		return dpToken{kind: dpIdent, text: l.src[start:l.pos], pos: start}, nil
	case isDPDigit(c) || (c == '.' && l.pos+1 < len(l.src) && isDPDigit(l.src[l.pos+1])):
		for l.pos < len(l.src) && (isDPDigit(l.src[l.pos]) || l.src[l.pos] == '.') {
			l.pos++
		}
		// An exponent: 1e-5, 2.5E+3.
		if l.pos < len(l.src) && (l.src[l.pos] == 'e' || l.src[l.pos] == 'E') {
			end := l.pos + 1
			if end < len(l.src) && (l.src[end] == '-' || l.src[end] == '+') {
				end++
			}
			if end < len(l.src) && isDPDigit(l.src[end]) {
				for end < len(l.src) && isDPDigit(l.src[end]) {
					end++
				}
				l.pos = end
			}
		}
		return dpToken{kind: dpNumber, text: l.src[start:l.pos], pos: start}, nil
	case c == '\'' || c == '"':
		text, err := l.quoted(c)
		return dpToken{kind: dpString, text: text, pos: start}, err
	case c == '`':
		text, err := l.quoted(c)
		return dpToken{kind: dpQuotedIdent, text: text, pos: start}, err
	}
	l.pos++
	return dpToken{kind: dpPunct, text: l.src[start:l.pos], pos: start}, nil
}

// quoted scans a string or quoted identifier opened by q. A doubled quote
// stands for itself; in strings a backslash escapes the next byte, as in
// MySQL's default SQL mode.
func (l *dpLexer) quoted(q byte) (string, error) {
	start := l.pos
	l.pos++
	var b strings.Builder
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == q && l.pos+1 < len(l.src) && l.src[l.pos+1] == q:
			b.WriteByte(q)
			l.pos += 2
		case c == q:
			l.pos++
			return b.String(), nil
		case c == '\\' && q != '`' && l.pos+1 < len(l.src):
			b.WriteByte(unescapeDP(l.src[l.pos+1]))
			l.pos += 2
		default:
			b.WriteByte(c)
			l.pos++
		}
	}
	return "", &SyntaxError{Msg: fmt.Sprintf("unterminated quoted text starting at offset %d", start)}
}

func unescapeDP(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 'r':
		return '\r'
	case '0':
		return 0
	}
	return c
}

func (l *dpLexer) skipBlanks() error {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.pos++
		case c == '#':
			l.skipLine()
		case c == '-' && strings.HasPrefix(l.src[l.pos:], "--") &&
			(l.pos+2 == len(l.src) || isDPBlank(l.src[l.pos+2])):
			l.skipLine()
		case c == '/' && strings.HasPrefix(l.src[l.pos:], "/*"):
			end := strings.Index(l.src[l.pos+2:], "*/")
			if end < 0 {
				return &SyntaxError{Msg: fmt.Sprintf("unterminated comment starting at offset %d", l.pos)}
			}
			l.pos += 2 + end + 2
		default:
			return nil
		}
	}
	return nil
}

func (l *dpLexer) skipLine() {
	for l.pos < len(l.src) && l.src[l.pos] != '\n' {
		l.pos++
	}
}

func isDPBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isDPDigit(c byte) bool { return c >= '0' && c <= '9' }

func isDPIdentStart(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isDPIdentPart(c byte) bool { return isDPIdentStart(c) || isDPDigit(c) }
