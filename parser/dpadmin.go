package parser

import (
	"math"
	"strconv"
)

// number consumes a non-negative number.
func (p *dpParser) number(what string) (float64, error) {
	if p.tok.kind != dpNumber {
		return 0, p.errorf("expected a number for %s after %s, got %s", what, p.prev, p.tok.describe())
	}
	f, err := strconv.ParseFloat(p.tok.text, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, p.errorf("%s %q is not a number", what, p.tok.text)
	}
	return f, p.advance()
}

// expect consumes the keyword kw or fails.
func (p *dpParser) expect(kw string) error {
	if ok, err := p.accept(kw); ok || err != nil {
		return err
	}
	return p.errorf("expected %s after %s, got %s", kw, p.prev, p.tok.describe())
}

// budgetTarget parses `BUDGET FOR ROLE name` or `BUDGET FOR USER name`.
func (p *dpParser) budgetTarget() (role, user string, err error) {
	if err := p.expect("BUDGET"); err != nil {
		return "", "", err
	}
	if err := p.expect("FOR"); err != nil {
		return "", "", err
	}
	switch {
	case p.tok.keyword("ROLE"):
		if err := p.advance(); err != nil {
			return "", "", err
		}
		role, err = p.name("role")
	case p.tok.keyword("USER"):
		if err := p.advance(); err != nil {
			return "", "", err
		}
		user, err = p.name("user")
	default:
		err = p.errorf("expected USER or ROLE after FOR, got %s", p.tok.describe())
	}
	return role, user, err
}

// setPrivacyBudget parses, after SET PRIVACY, the clauses of
// SetPrivacyBudget in any order, each at most once.
func (p *dpParser) setPrivacyBudget() (Statement, error) {
	role, user, err := p.budgetTarget()
	if err != nil {
		return nil, err
	}
	out := &SetPrivacyBudget{Role: role, User: user}
	set := func(dst **float64, what string) error {
		if *dst != nil {
			return p.errorf("%s is given twice", what)
		}
		f, err := p.number(what)
		if err != nil {
			return err
		}
		*dst = &f
		return nil
	}
	for p.tok.kind != dpEOF && !(p.tok.kind == dpPunct && p.tok.text == ";") {
		switch {
		case p.tok.keyword("EPSILON"):
			if err := p.advance(); err != nil {
				return nil, err
			}
			if err := set(&out.Epsilon, "EPSILON"); err != nil {
				return nil, err
			}
			if ok, err := p.accept("DELTA"); err != nil {
				return nil, err
			} else if ok {
				if err := set(&out.Delta, "DELTA"); err != nil {
					return nil, err
				}
			}
		case p.tok.keyword("DELTA"):
			if err := p.advance(); err != nil {
				return nil, err
			}
			if err := set(&out.Delta, "DELTA"); err != nil {
				return nil, err
			}
		case p.tok.keyword("MAX"):
			if err := p.advance(); err != nil {
				return nil, err
			}
			dst, what := &out.MaxEpsilonPerQuery, "MAX EPSILON PER QUERY"
			switch {
			case p.tok.keyword("EPSILON"):
			case p.tok.keyword("DELTA"):
				dst, what = &out.MaxDeltaPerQuery, "MAX DELTA PER QUERY"
			default:
				return nil, p.errorf("expected EPSILON or DELTA after MAX, got %s", p.tok.describe())
			}
			if err := p.advance(); err != nil {
				return nil, err
			}
			if err := p.expect("PER"); err != nil {
				return nil, err
			}
			if err := p.expect("QUERY"); err != nil {
				return nil, err
			}
			if err := set(dst, what); err != nil {
				return nil, err
			}
		case p.tok.keyword("POOL"):
			if err := p.advance(); err != nil {
				return nil, err
			}
			if err := p.expect("EPSILON"); err != nil {
				return nil, err
			}
			if err := set(&out.PoolEpsilon, "POOL EPSILON"); err != nil {
				return nil, err
			}
			if ok, err := p.accept("DELTA"); err != nil {
				return nil, err
			} else if ok {
				if err := set(&out.PoolDelta, "POOL DELTA"); err != nil {
					return nil, err
				}
			}
		default:
			return nil, p.errorf("expected EPSILON, DELTA, MAX or POOL after %s, got %s", p.prev, p.tok.describe())
		}
	}
	if out.Epsilon == nil && out.Delta == nil && out.MaxEpsilonPerQuery == nil && out.MaxDeltaPerQuery == nil &&
		out.PoolEpsilon == nil && out.PoolDelta == nil {
		return nil, p.errorf("SET PRIVACY BUDGET needs EPSILON, DELTA, MAX ... PER QUERY or POOL")
	}
	if out.User != "" && (out.MaxEpsilonPerQuery != nil || out.MaxDeltaPerQuery != nil || out.PoolEpsilon != nil || out.PoolDelta != nil) {
		return nil, p.errorf("per-query maxima and pools are set for roles, not users")
	}
	return out, p.end()
}

// resetPrivacyBudget parses, after RESET PRIVACY: BUDGET FOR USER name.
func (p *dpParser) resetPrivacyBudget() (Statement, error) {
	role, user, err := p.budgetTarget()
	if err != nil {
		return nil, err
	}
	if role != "" {
		return nil, p.errorf("RESET PRIVACY BUDGET resets a user's spending: use FOR USER")
	}
	return &ResetPrivacyBudget{User: user}, p.end()
}

// showPrivacyLedger parses, after SHOW PRIVACY LEDGER: [FOR USER name] [LIMIT n].
func (p *dpParser) showPrivacyLedger() (Statement, error) {
	out := &ShowPrivacyLedger{}
	if ok, err := p.accept("FOR"); err != nil {
		return nil, err
	} else if ok {
		if err := p.expect("USER"); err != nil {
			return nil, err
		}
		if out.User, err = p.name("user"); err != nil {
			return nil, err
		}
	}
	if ok, err := p.accept("LIMIT"); err != nil {
		return nil, err
	} else if ok {
		n, err := p.number("LIMIT")
		if err != nil {
			return nil, err
		}
		if n != math.Trunc(n) || n < 1 || n > 1e6 {
			return nil, p.errorf("LIMIT must be a whole number from 1 to 1000000")
		}
		out.Limit = int(n)
	}
	return out, p.end()
}

// explainPrivacy parses, after EXPLAIN PRIVACY, a query of the front door's
// dialect: the rest of the statement goes to that dialect's parser.
func (p *dpParser) explainPrivacy() (Statement, error) {
	if p.tok.kind == dpEOF {
		return nil, p.errorf("EXPLAIN PRIVACY needs a SELECT")
	}
	stmt, n, ok, err := parseEmbedded(p.lex.src[p.tok.pos:], p.dialect)
	if err != nil {
		return nil, err
	}
	if _, isSelect := stmt.(*Select); !ok || !isSelect {
		return nil, &UnsupportedError{What: "EXPLAIN PRIVACY of anything but a SELECT"}
	}
	return &ExplainPrivacy{Select: stmt, Params: n}, nil
}
