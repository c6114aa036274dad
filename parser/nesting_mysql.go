package parser

import (
	"strings"

	tidbfeature "github.com/pingcap/tidb/pkg/parser/tidb"
)

// mysqlNestLexer reads MySQL text for the nesting bound with the TiDB
// lexer's rules (pkg/parser/lexer.go) in MySQL's default SQL mode:
// backslash escapes and doubled quotes in '...' and "..." strings, `names`
// with doubled backticks, "#" comments, "-- " comments (a dash pair followed by a
// blank), /* */ comments, and /*! ... */ and /*T![feature] ... */ whose
// text is code. Where it must agree with TiDB on where a token starts —
// the start and end of strings, names and comments — it does the same;
// elsewhere it may cut a word more finely than TiDB, which only adds to the
// bound.
type mysqlNestLexer struct {
	src     string
	pos     int
	inBang  bool // inside /*! ... */: its */ is a blank
	pending int  // > 0: the byte at pos is returned once more (see '@@')
	// afterNumber is the end of the last number token: a word that starts
	// there is glued to it.
	afterNumber int
}

// isMySQLSpace is TiDB's test for a blank: unicode.IsSpace of one byte.
func isMySQLSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x85, 0xA0:
		return true
	}
	return false
}

func isMySQLIdentChar(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

// isMySQLUserVarChar: letters, digits, '_', '$', '.' and non-ASCII bytes.
func isMySQLUserVarChar(c byte) bool { return isMySQLIdentChar(c) || c == '.' }

func (l *mysqlNestLexer) next() nestTok {
	src := l.src
	for {
		if l.pending > 0 {
			// TiDB's startWithAt returns the byte after "@@" as a token
			// of its own without consuming it when it starts no name:
			// the parser sees that token twice.
			l.pending--
			if l.pos >= len(src) {
				return nestTok{kind: nkEOF}
			}
			return nestTok{kind: punctKind(src[l.pos], true)}
		}
		for l.pos < len(src) && isMySQLSpace(src[l.pos]) {
			l.pos++
		}
		if l.pos >= len(src) {
			return nestTok{kind: nkEOF}
		}
		start := l.pos
		c := src[start]
		switch {
		case c >= 0x80 || c == '_' || c == '$' || (c|0x20 >= 'a' && c|0x20 <= 'z'):
			return l.word(start)
		case c >= '0' && c <= '9':
			return l.number(start)
		}
		switch c {
		case '#':
			l.skipLine()
			continue
		case '-':
			if strings.HasPrefix(src[start:], "--") && (start+2 == len(src) || isMySQLSpace(src[start+2])) {
				l.skipLine()
				continue
			}
			l.pos++
			return nestTok{kind: nkOp}
		case '/':
			if start+1 < len(src) && src[start+1] == '*' {
				l.comment(start)
				continue
			}
			l.pos++
			return nestTok{kind: nkOp}
		case '*':
			if l.inBang && start+1 < len(src) && src[start+1] == '/' {
				l.inBang = false
				l.pos += 2
				continue
			}
			l.pos++
			return nestTok{kind: nkOp}
		case '\'', '"':
			l.pos = l.quoted(start+1, c, true)
			return nestTok{kind: nkOperand}
		case '`':
			l.pos = l.quoted(start+1, '`', false)
			return nestTok{kind: nkOperand}
		case '@':
			return l.at(start)
		case '.':
			if start+1 < len(src) && isDPDigit(src[start+1]) {
				return l.float(start)
			}
		}
		l.pos++
		return nestTok{kind: punctKind(c, true)}
	}
}

func (l *mysqlNestLexer) word(start int) nestTok {
	src := l.src
	i := start + 1
	for i < len(src) && isMySQLIdentChar(src[i]) {
		i++
	}
	l.pos = i
	return nestTok{kind: nkWord, kw: lookupNestKeyword(src[start:i]),
		glued: start == l.afterNumber, dotNext: i < len(src) && src[i] == '.'}
}

// number follows TiDB's startWithNumber: digits (after "0", octal digits
// first), a hex (0x...) or bit (0b...) run, a fraction and an exponent;
// digits followed by a letter are a name, and so are 0x, 0b and 0B with
// nothing valid after them. What follows a number is lexed next, glued.
func (l *mysqlNestLexer) number(start int) nestTok {
	src := l.src
	i := start + 1
	if src[start] == '0' && i < len(src) {
		switch c := src[i]; {
		case c >= '0' && c <= '7':
			for i < len(src) && src[i] >= '0' && src[i] <= '7' {
				i++
			}
		case c == 'x' || c == 'X' || c == 'b':
			i++
			from := i
			for i < len(src) && (c != 'b' && isHex(src[i]) || c == 'b' && (src[i] == '0' || src[i] == '1')) {
				i++
			}
			if i == from || (i < len(src) && isDPDigit(src[i])) {
				return l.word(start)
			}
		case c == '.':
			return l.float(start)
		case c == 'B':
			return l.word(start)
		}
	}
	for i < len(src) && isDPDigit(src[i]) {
		i++
	}
	if i < len(src) && (src[i] == '.' || src[i] == 'e' || src[i] == 'E') {
		// TiDB rescans from the start as a float, even after 0x1f.
		return l.float(start)
	}
	if i < len(src) && isMySQLIdentChar(src[i]) {
		return l.word(start) // 1abc, 0x1g: a name
	}
	l.pos, l.afterNumber = i, i
	return nestTok{kind: nkOperand}
}

// float follows TiDB's scanFloat from start (a digit or '.'). The sign of
// an exponent is counted as an operator: where TiDB reads the text as a
// qualified name (t.1e-5) the sign is one.
func (l *mysqlNestLexer) float(start int) nestTok {
	src := l.src
	i := start
	for i < len(src) && isDPDigit(src[i]) {
		i++
	}
	if i < len(src) && src[i] == '.' {
		i++
		for i < len(src) && isDPDigit(src[i]) {
			i++
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		j := i + 1
		signed := j < len(src) && (src[j] == '-' || src[j] == '+')
		if signed {
			j++
		}
		if j < len(src) && isDPDigit(src[j]) {
			for j < len(src) && isDPDigit(src[j]) {
				j++
			}
			l.pos, l.afterNumber = j, j
			if signed {
				return nestTok{kind: nkOp}
			}
			return nestTok{kind: nkOperand}
		}
		// 9e, 9ex: TiDB rescans from the start as a name (which stops
		// at a '.').
		return l.word(start)
	}
	l.pos, l.afterNumber = i, i
	return nestTok{kind: nkOperand}
}

func isHex(c byte) bool {
	return isDPDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f')
}

func (l *mysqlNestLexer) skipLine() {
	if nl := strings.IndexByte(l.src[l.pos:], '\n'); nl >= 0 {
		l.pos += nl
	} else {
		l.pos = len(l.src)
	}
}

// comment skips the comment that starts at start ("/*"), or only its
// opening when its text is code (/*!12345 ... */, /*T![feature] ... */).
func (l *mysqlNestLexer) comment(start int) {
	src := l.src
	i := start + 2
	star := false
	if i < len(src) {
		switch src[i] {
		case '!':
			i++
			// Exactly five version digits are skipped, or none.
			if i+5 <= len(src) && allDigits(src[i:i+5]) {
				i += 5
			}
			l.pos, l.inBang = i, true
			return
		case 'T':
			if i+1 < len(src) && src[i+1] == '!' {
				end, code := tidbFeatures(src, i+2)
				if code {
					l.pos, l.inBang = end, true
					return
				}
			}
		case '*':
			star = true // "/**/" is a whole comment
		}
		i++
	}
	from := i
	if star {
		from = start + 2
	}
	if end := strings.Index(src[from:], "*/"); end >= 0 {
		l.pos = from + end + 2
	} else {
		l.pos = len(src) // unterminated: TiDB's error
	}
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDPDigit(s[i]) {
			return false
		}
	}
	return true
}

// tidbFeatures reads what follows "/*T!" at i and reports where the
// comment's text starts and whether TiDB runs it as code. Like TiDB's
// scanFeatureIDs: a well-formed "[feature,...]" is code only if TiDB's
// parser knows every feature; anything else (no list, a malformed one) is
// code from i on.
func tidbFeatures(src string, i int) (int, bool) {
	if i >= len(src) || src[i] != '[' {
		return i, true
	}
	var features []string
	j := i + 1
	begin := j
	for j < len(src) {
		c := src[j]
		switch {
		case isMySQLIdentChar(c):
			j++
			continue
		case (c == ',' || c == ']') && j > begin:
			features = append(features, src[begin:j])
			j++
			if c == ']' {
				return j, tidbfeature.CanParseFeature(features...)
			}
			begin = j
			continue
		}
		break
	}
	return i, true
}

// quoted returns the offset past the closing quote q of a string or name
// whose text starts at i (quotedEnd: in strings a backslash escapes the next
// byte). Unterminated text runs to the end (TiDB rejects it).
func (l *mysqlNestLexer) quoted(i int, q byte, backslashes bool) int {
	return quotedEnd(l.src, i, q, backslashes)
}

// at follows TiDB's startWithAt: @name, @'name', @`name`, @@name,
// @@global.name, @@session.'name', ...
func (l *mysqlNestLexer) at(start int) nestTok {
	src := l.src
	i := start + 1
	double := i < len(src) && src[i] == '@'
	if double {
		i++
		for _, p := range []string{"global.", "session.", "local."} {
			if len(src)-i >= len(p) && strings.EqualFold(src[i:i+len(p)], p) {
				i += len(p)
				break
			}
		}
	}
	switch {
	case i < len(src) && (src[i] == '\'' || src[i] == '"'):
		l.pos = l.quoted(i+1, src[i], true)
	case i < len(src) && src[i] == '`':
		l.pos = l.quoted(i+1, '`', false)
	case i < len(src) && isMySQLUserVarChar(src[i]):
		for i < len(src) && isMySQLUserVarChar(src[i]) {
			i++
		}
		l.pos = i
	default:
		l.pos = i
		if double {
			l.pending = 1
		}
	}
	return nestTok{kind: nkOperand}
}
