package parser

import (
	"fmt"
	"unicode/utf8"
)

// dpRule is one of dpproxy's own statements: the two keywords it starts
// with and the grammar rule that parses the rest. A statement whose first
// two keywords match a rule is parsed by dpproxy's grammar only; the dialect
// parsers never see it (they would reject it anyway).
type dpRule struct {
	first, second string
	parse         func(*dpParser) (Statement, error)
}

// dpRules lists dpproxy's statements. To add one, add its leading keywords
// here and write its rule as a dpParser method below.
var dpRules []dpRule

// init fills dpRules: EXPLAIN PRIVACY parses the query it embeds with Parse,
// which looks rules up, so the table cannot be a plain initialised variable.
func init() {
	dpRules = []dpRule{
		{"SHOW", "PRIVACY", (*dpParser).showPrivacy},
		{"SET", "PRIVACY", (*dpParser).setPrivacyBudget},
		{"RESET", "PRIVACY", (*dpParser).resetPrivacyBudget},
		{"EXPLAIN", "PRIVACY", (*dpParser).explainPrivacy},
		{"TRAIN", "PRIVATE", (*dpParser).trainPrivate},
		{"EVALUATE", "MODEL", (*dpParser).evaluateModel},
		{"SHOW", "MODELS", (*dpParser).showModels},
		{"SHOW", "MODEL", (*dpParser).showModel},
		{"DROP", "MODEL", (*dpParser).dropModel},
	}
}

// parseDPStatement parses sql when it is one of dpproxy's statements. ok is
// false when sql does not start like one; then sql is for the dialect parser.
func parseDPStatement(sql string, d Dialect) (stmt Statement, ok bool, err error) {
	lex := dpLexer{src: sql}
	first, err := lex.next()
	if err != nil || first.kind != dpIdent {
		return nil, false, nil
	}
	second, err := lex.next()
	if err != nil || second.kind != dpIdent {
		return nil, false, nil
	}
	for _, r := range dpRules {
		if !first.keyword(r.first) || !second.keyword(r.second) {
			continue
		}
		p := &dpParser{lex: lex, prev: first.text + " " + second.text, dialect: d}
		if err := p.advance(); err != nil {
			return nil, true, err
		}
		stmt, err := r.parse(p)
		return stmt, true, err
	}
	return nil, false, nil
}

// isDPStatement reports whether sql starts like one of dpproxy's statements.
func isDPStatement(sql string) bool {
	lex := dpLexer{src: sql}
	first, err := lex.next()
	if err != nil || first.kind != dpIdent {
		return false
	}
	second, err := lex.next()
	if err != nil || second.kind != dpIdent {
		return false
	}
	for _, r := range dpRules {
		if first.keyword(r.first) && second.keyword(r.second) {
			return true
		}
	}
	return false
}

// dpParser is a recursive-descent parser over dpLexer tokens with one token
// of lookahead (tok).
type dpParser struct {
	lex     dpLexer
	tok     dpToken
	prev    string  // the last tokens consumed, as typed, for error messages
	dialect Dialect // of the front door, for statements that embed SQL
}

// maxPrevText bounds dpParser.prev: a statement may be a megabyte of
// tokens, and appending each to an ever longer string would take time
// quadratic in its length.
const maxPrevText = 200

func (p *dpParser) advance() error {
	switch p.tok.kind {
	case dpEOF: // nothing consumed yet
	case dpIdent:
		p.prev += " " + p.tok.text
	default:
		p.prev += " " + p.tok.describe()
	}
	if len(p.prev) > 2*maxPrevText {
		cut := len(p.prev) - maxPrevText
		for cut < len(p.prev) && !utf8.RuneStart(p.prev[cut]) {
			cut++
		}
		p.prev = "..." + p.prev[cut:]
	}
	tok, err := p.lex.next()
	if err != nil {
		return err
	}
	p.tok = tok
	return nil
}

// errorf reports a syntax error at the current token.
func (p *dpParser) errorf(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return &SyntaxError{Msg: fmt.Sprintf("dpproxy syntax error at offset %d: %s", p.tok.pos, msg)}
}

// accept consumes the keyword kw when it is the current token.
func (p *dpParser) accept(kw string) (bool, error) {
	if !p.tok.keyword(kw) {
		return false, nil
	}
	return true, p.advance()
}

// name consumes a user or role name: an identifier, `quoted` or 'string'.
func (p *dpParser) name(what string) (string, error) {
	switch p.tok.kind {
	case dpIdent, dpQuotedIdent, dpString:
		name := p.tok.text
		if name == "" {
			return "", p.errorf("empty %s name", what)
		}
		return name, p.advance()
	}
	return "", p.errorf("expected a %s name after %s, got %s", what, p.prev, p.tok.describe())
}

// end accepts an optional ';' and requires the end of the statement.
func (p *dpParser) end() error {
	if p.tok.kind == dpPunct && p.tok.text == ";" {
		if err := p.advance(); err != nil {
			return err
		}
	}
	if p.tok.kind != dpEOF {
		return p.errorf("expected end of statement after %s, got %s", p.prev, p.tok.describe())
	}
	return nil
}

// showPrivacy parses, after SHOW PRIVACY:
//
//	BUDGET [FOR USER name | FOR ROLE name]
//	BUDGETS
//	LEDGER [FOR USER name] [LIMIT n]
func (p *dpParser) showPrivacy() (Statement, error) {
	if ok, err := p.accept("LEDGER"); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return p.showPrivacyLedger()
	}
	if ok, err := p.accept("BUDGETS"); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return &ShowPrivacyBudget{All: true}, p.end()
	}
	if ok, err := p.accept("BUDGET"); !ok || err != nil {
		if err != nil {
			return nil, err
		}
		return nil, p.errorf("expected BUDGET or BUDGETS after SHOW PRIVACY, got %s", p.tok.describe())
	}
	out := &ShowPrivacyBudget{}
	if ok, err := p.accept("FOR"); !ok || err != nil {
		if err != nil {
			return nil, err
		}
		return out, p.end()
	}
	switch {
	case p.tok.keyword("USER"):
		if err := p.advance(); err != nil {
			return nil, err
		}
		name, err := p.name("user")
		if err != nil {
			return nil, err
		}
		out.User = name
	case p.tok.keyword("ROLE"):
		if err := p.advance(); err != nil {
			return nil, err
		}
		name, err := p.name("role")
		if err != nil {
			return nil, err
		}
		out.Role = name
	default:
		return nil, p.errorf("expected USER or ROLE after FOR, got %s", p.tok.describe())
	}
	return out, p.end()
}
