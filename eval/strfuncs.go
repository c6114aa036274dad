package eval

import (
	"strings"
	"unicode/utf8"
)

// String search and padding functions, as MySQL defines them (positions are
// 1-based and in characters; 0 means "not found"). Catalog queries of JDBC
// drivers use them (Connector/J's getColumns calls LOCATE).
func init() {
	for name, b := range map[string]builtin{
		"locate":   {2, 3, true, fnLocate},
		"position": {2, 2, true, fnLocate},
		"instr": {2, 2, true, func(ev *evaluator, a []any) (any, error) {
			return fnLocate(ev, []any{a[1], a[0]})
		}},
		"left":    {2, 2, true, fnLeftRight(true)},
		"right":   {2, 2, true, fnLeftRight(false)},
		"lpad":    {3, 3, true, fnPad(true)},
		"rpad":    {3, 3, true, fnPad(false)},
		"repeat":  {2, 2, true, fnRepeat},
		"reverse": {1, 1, true, str1(reverse)},
		"space": {1, 1, true, func(ev *evaluator, a []any) (any, error) {
			return fnRepeat(ev, []any{" ", a[0]})
		}},
	} {
		builtins[name] = b
	}
}

// fnLocate is LOCATE(substr, str[, pos]): the 1-based character position of
// substr in str at or after pos, 0 if absent. Comparison ignores case, as
// MySQL's default collation does.
func fnLocate(_ *evaluator, a []any) (any, error) {
	sub, s := []rune(strings.ToLower(ToString(a[0]))), []rune(strings.ToLower(ToString(a[1])))
	start := int64(1)
	if len(a) > 2 {
		start, _ = ToInt(a[2])
		if start < 1 {
			return int64(0), nil
		}
	}
	for i := int(start - 1); i+len(sub) <= len(s); i++ {
		if string(s[i:i+len(sub)]) == string(sub) {
			return int64(i + 1), nil
		}
	}
	return int64(0), nil
}

func fnLeftRight(left bool) func(*evaluator, []any) (any, error) {
	return func(_ *evaluator, a []any) (any, error) {
		r := []rune(ToString(a[0]))
		n, _ := ToInt(a[1])
		if n <= 0 {
			return "", nil
		}
		if int(n) >= len(r) {
			return string(r), nil
		}
		if left {
			return string(r[:n]), nil
		}
		return string(r[len(r)-int(n):]), nil
	}
}

// maxStringResult bounds every string the evaluator builds (padding,
// repetition, CONCAT, ||, REPLACE), as MySQL's max_allowed_packet does, so
// that no statement can exhaust the proxy's memory: past it the result is
// NULL. Nested REPLACEs grow geometrically, so each checks the length it
// would build before building it.
const maxStringResult = 1 << 20

func fnPad(left bool) func(*evaluator, []any) (any, error) {
	return func(_ *evaluator, a []any) (any, error) {
		s := []rune(ToString(a[0]))
		n, _ := ToInt(a[1])
		pad := []rune(ToString(a[2]))
		if n < 0 || n > maxStringResult {
			return nil, nil
		}
		if int(n) <= len(s) {
			return string(s[:n]), nil
		}
		if len(pad) == 0 {
			return nil, nil
		}
		fill := make([]rune, 0, int(n)-len(s))
		for len(fill) < int(n)-len(s) {
			fill = append(fill, pad[len(fill)%len(pad)])
		}
		if left {
			return string(fill) + string(s), nil
		}
		return string(s) + string(fill), nil
	}
}

func fnRepeat(_ *evaluator, a []any) (any, error) {
	s := ToString(a[0])
	n, _ := ToInt(a[1])
	if n <= 0 {
		return "", nil
	}
	if int64(len(s))*n > maxStringResult {
		return nil, nil
	}
	return strings.Repeat(s, int(n)), nil
}

func reverse(s string) string {
	r := make([]rune, 0, utf8.RuneCountInString(s))
	for _, c := range s {
		r = append(r, c)
	}
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}
