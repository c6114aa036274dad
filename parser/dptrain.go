package parser

import (
	"strconv"
	"strings"
)

// trainPrivate parses, after TRAIN PRIVATE:
//
//	LOGREG name ON ( select ) LABEL expr [WITH ( key = value [, ...] )]
func (p *dpParser) trainPrivate() (Statement, error) {
	if err := p.expect("LOGREG"); err != nil {
		return nil, err
	}
	name, err := p.name("model")
	if err != nil {
		return nil, err
	}
	q, label, opts, err := p.onLabelWith()
	if err != nil {
		return nil, err
	}
	return &TrainModel{Name: strings.ToLower(name), Kind: "logreg", Query: q, Label: label, Options: opts}, nil
}

// evaluateModel parses, after EVALUATE MODEL: name ON ( select ) LABEL expr [WITH (...)].
func (p *dpParser) evaluateModel() (Statement, error) {
	name, err := p.name("model")
	if err != nil {
		return nil, err
	}
	q, label, opts, err := p.onLabelWith()
	if err != nil {
		return nil, err
	}
	return &EvaluateModel{Name: strings.ToLower(name), Query: q, Label: label, Options: opts}, nil
}

// onLabelWith parses ON ( select ) LABEL expr [WITH ( options )]. The query
// and the label are SQL of the front door's dialect, handed to its parser.
func (p *dpParser) onLabelWith() (*Select, Expr, map[string]any, error) {
	if err := p.expect("ON"); err != nil {
		return nil, nil, nil, err
	}
	if p.tok.kind != dpPunct || p.tok.text != "(" {
		return nil, nil, nil, p.errorf("expected ( after ON, got %s", p.tok.describe())
	}
	start := p.tok.pos + 1
	end, err := p.skipParens()
	if err != nil {
		return nil, nil, nil, err
	}
	stmt, n, ok, err := parseEmbedded(p.lex.src[start:end], p.dialect)
	if err != nil {
		return nil, nil, nil, err
	}
	q, isSelect := stmt.(*Select)
	if !ok || !isSelect || n > 0 {
		return nil, nil, nil, p.errorf("ON needs a SELECT without parameters")
	}
	if err := p.expect("LABEL"); err != nil {
		return nil, nil, nil, err
	}
	// The label runs to WITH or to the end, outside parentheses.
	labelStart := p.tok.pos
	labelEnd := len(p.lex.src)
	depth := 0
	for p.tok.kind != dpEOF {
		if p.tok.kind == dpPunct {
			switch p.tok.text {
			case "(":
				depth++
			case ")":
				depth--
			case ";":
				if depth == 0 {
					labelEnd = p.tok.pos
				}
			}
		}
		if depth == 0 && p.tok.keyword("WITH") {
			labelEnd = p.tok.pos
			break
		}
		if err := p.advance(); err != nil {
			return nil, nil, nil, err
		}
	}
	if labelEnd == len(p.lex.src) && p.tok.kind == dpEOF {
		labelEnd = p.tok.pos
	}
	text := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(p.lex.src[labelStart:labelEnd]), ";"))
	if text == "" {
		return nil, nil, nil, p.errorf("LABEL needs a boolean expression")
	}
	lstmt, _, _, err := parseEmbedded("SELECT "+text, p.dialect)
	if err != nil {
		return nil, nil, nil, err
	}
	lsel, ok := lstmt.(*Select)
	if !ok || len(lsel.Items) != 1 || lsel.From != nil || lsel.Items[0].Star {
		return nil, nil, nil, p.errorf("LABEL needs one boolean expression, got %q", text)
	}
	opts := map[string]any{}
	if ok, err := p.accept("WITH"); err != nil {
		return nil, nil, nil, err
	} else if ok {
		if opts, err = p.options(); err != nil {
			return nil, nil, nil, err
		}
	}
	return q, lsel.Items[0].Expr, opts, p.end()
}

// skipParens consumes a parenthesised group starting at the current "("
// and returns the offset of its closing ")". Strings and quoted names are
// single tokens, so parentheses inside them do not count.
func (p *dpParser) skipParens() (int, error) {
	depth := 0
	for {
		if p.tok.kind == dpEOF {
			return 0, p.errorf("unbalanced parentheses")
		}
		if p.tok.kind == dpPunct {
			switch p.tok.text {
			case "(":
				depth++
			case ")":
				depth--
				if depth == 0 {
					end := p.tok.pos
					return end, p.advance()
				}
			}
		}
		if err := p.advance(); err != nil {
			return 0, err
		}
	}
}

// options parses ( key = value [, key = value ...] ) with numbers or strings.
func (p *dpParser) options() (map[string]any, error) {
	if p.tok.kind != dpPunct || p.tok.text != "(" {
		return nil, p.errorf("expected ( after WITH, got %s", p.tok.describe())
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	opts := map[string]any{}
	for {
		key, err := p.name("option")
		if err != nil {
			return nil, err
		}
		key = strings.ToLower(key)
		if _, dup := opts[key]; dup {
			return nil, p.errorf("option %s is given twice", key)
		}
		if p.tok.kind != dpPunct || p.tok.text != "=" {
			return nil, p.errorf("expected = after %s, got %s", key, p.tok.describe())
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		// A leading minus is read as part of the number, so that a negative
		// value reaches the option's own check and its message.
		sign := 1.0
		if p.tok.kind == dpPunct && p.tok.text == "-" {
			if err := p.advance(); err != nil {
				return nil, err
			}
			if p.tok.kind != dpNumber {
				return nil, p.errorf("expected a number after - for %s, got %s", key, p.tok.describe())
			}
			sign = -1
		}
		switch p.tok.kind {
		case dpNumber:
			f, err := strconv.ParseFloat(p.tok.text, 64)
			if err != nil {
				return nil, p.errorf("%s: %q is not a number", key, p.tok.text)
			}
			opts[key] = sign * f
		case dpString, dpIdent:
			opts[key] = p.tok.text
		default:
			return nil, p.errorf("expected a number or a string for %s, got %s", key, p.tok.describe())
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.tok.kind == dpPunct && p.tok.text == "," {
			if err := p.advance(); err != nil {
				return nil, err
			}
			continue
		}
		if p.tok.kind == dpPunct && p.tok.text == ")" {
			return opts, p.advance()
		}
		return nil, p.errorf("expected , or ) in WITH options, got %s", p.tok.describe())
	}
}

// showModel parses, after SHOW MODEL: name. SHOW MODELS has its own rule.
func (p *dpParser) showModel() (Statement, error) {
	name, err := p.name("model")
	if err != nil {
		return nil, err
	}
	return &ShowModel{Name: strings.ToLower(name)}, p.end()
}

func (p *dpParser) showModels() (Statement, error) { return &ShowModels{}, p.end() }

// dropModel parses, after DROP MODEL: name.
func (p *dpParser) dropModel() (Statement, error) {
	name, err := p.name("model")
	if err != nil {
		return nil, err
	}
	return &DropModel{Name: strings.ToLower(name)}, p.end()
}
