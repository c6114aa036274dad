package eval

import "unicode"

// Like reports whether s matches the SQL LIKE pattern: '%' matches any run of
// characters (also none), '_' exactly one character, and escape makes the
// character after it literal (escape 0 means there is none). An escape at the
// very end of the pattern stands for itself, as in MySQL. Matching is by
// characters (runes), not bytes; caseInsensitive folds case first.
func Like(s, pattern string, escape rune, caseInsensitive bool) bool {
	toks := compileLike(pattern, escape)
	text := []rune(s)
	same := func(a, b rune) bool {
		if caseInsensitive {
			return unicode.ToLower(a) == unicode.ToLower(b)
		}
		return a == b
	}
	// Classic wildcard matching with backtracking to the last '%': linear in
	// practice, O(len(s)·len(pattern)) at worst.
	ti, pi := 0, 0
	starP, starT := -1, 0
	for ti < len(text) {
		if pi < len(toks) {
			switch t := toks[pi]; {
			case t.kind == likeAny:
				starP, starT = pi, ti
				pi++
				continue
			case t.kind == likeOne || same(t.r, text[ti]):
				ti++
				pi++
				continue
			}
		}
		if starP < 0 {
			return false
		}
		// Let the last '%' swallow one more character and retry after it.
		starT++
		ti, pi = starT, starP+1
	}
	for pi < len(toks) && toks[pi].kind == likeAny {
		pi++
	}
	return pi == len(toks)
}

type likeKind int

const (
	likeLit likeKind = iota
	likeOne          // _
	likeAny          // %
)

type likeTok struct {
	kind likeKind
	r    rune
}

func compileLike(pattern string, escape rune) []likeTok {
	p := []rune(pattern)
	toks := make([]likeTok, 0, len(p))
	for i := 0; i < len(p); i++ {
		switch r := p[i]; {
		case escape != 0 && r == escape && i+1 < len(p):
			i++
			toks = append(toks, likeTok{likeLit, p[i]})
		case r == '%':
			// Runs of '%' are one '%'; collapsing them keeps backtracking cheap.
			if n := len(toks); n == 0 || toks[n-1].kind != likeAny {
				toks = append(toks, likeTok{kind: likeAny})
			}
		case r == '_':
			toks = append(toks, likeTok{kind: likeOne})
		default:
			toks = append(toks, likeTok{likeLit, r})
		}
	}
	return toks
}
