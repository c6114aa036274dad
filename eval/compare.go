package eval

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Collation decides how strings compare. The zero value is MySQL's default.
type Collation int

const (
	// CaseInsensitive compares strings rune by rune after simple lower-case
	// folding, like MySQL's default collations (utf8mb4_0900_ai_ci,
	// utf8mb4_general_ci): 'abc' = 'ABC' and LIKE ignores case. Unlike them it
	// is accent-sensitive ('é' <> 'e') and NO PAD ('a' <> 'a ').
	CaseInsensitive Collation = iota
	// Binary compares strings byte by byte, like PostgreSQL's "C" collation
	// and MySQL's utf8mb4_bin; LIKE is then case-sensitive (ILIKE is not).
	Binary
)

// Collator is implemented by an Env that wants a collation other than the
// MySQL default, such as the PostgreSQL front door (Binary).
type Collator interface {
	Collation() Collation
}

func collationOf(env Env) Collation {
	if c, ok := env.(Collator); ok {
		return c.Collation()
	}
	return CaseInsensitive
}

// Compare is CaseInsensitive.Compare.
func Compare(a, b any) int { return CaseInsensitive.Compare(a, b) }

// Compare is a total order for ORDER BY, DISTINCT and MIN/MAX: NULL sorts
// first (MySQL's ascending order), numbers (and bools as 1/0) compare
// numerically and strings by the collation, so under CaseInsensitive 'a' and
// 'A' are equal and a later ORDER BY key decides between them, as in MySQL.
//
// A number and a string do not compare numerically here, as they do under
// '<': that rule is not transitive (9 < 10, 10 = '10', '10' < 9 as strings),
// and sorting needs a strict order. In MySQL the case does not arise, since a
// column has one type (a CASE mixing 1 and 'a' is a VARCHAR); Select follows
// that by sorting a key that mixes kinds as strings. Compare itself ranks
// all numbers before all strings, as SQLite does.
func (c Collation) Compare(a, b any) int {
	a, b = normalize(a), normalize(b)
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	as, aStr := a.(string)
	bs, bStr := b.(string)
	switch {
	case aStr && bStr:
		r, _ := c.cmp(as, bs)
		return r
	case aStr:
		return 1
	case bStr:
		return -1
	}
	r, _ := c.cmp(a, b)
	return r
}

// unifyKinds returns vals with numbers rendered as strings when vals mixes
// numbers and strings: MySQL's type of such a column or expression is a
// string type, and its values sort as strings.
func unifyKinds(vals []any) []any {
	var strs, nums bool
	for _, v := range vals {
		switch normalize(v).(type) {
		case string:
			strs = true
		case nil:
		default:
			nums = true
		}
	}
	if !strs || !nums {
		return vals
	}
	out := make([]any, len(vals))
	for i, v := range vals {
		if v = normalize(v); v != nil {
			v = ToString(v)
		}
		out[i] = v
	}
	return out
}

// cmp compares two values under MySQL's comparison rules (the rules of =, <,
// BETWEEN, IN): strings by the collation, integers exactly, anything else
// involving a number as float64. null reports that either side is NULL.
func (c Collation) cmp(a, b any) (r int, null bool) {
	a, b = normalize(a), normalize(b)
	if a == nil || b == nil {
		return 0, true
	}
	as, aStr := a.(string)
	bs, bStr := b.(string)
	if aStr && bStr {
		if c == Binary {
			return strings.Compare(as, bs), false
		}
		return foldCompare(as, bs), false
	}
	ai, aInt := intOf(a)
	bi, bInt := intOf(b)
	if aInt && bInt {
		return cmpOrdered(ai, bi), false
	}
	af, _ := ToFloat(a)
	bf, _ := ToFloat(b)
	return cmpOrdered(af, bf), false
}

// equal reports a = b under the collation; null when either is NULL.
func (c Collation) equal(a, b any) (eq bool, null bool) {
	r, null := c.cmp(a, b)
	return r == 0, null
}

func cmpOrdered[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// foldCompare compares strings rune by rune after simple case folding.
func foldCompare(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if r := cmpOrdered(int64(unicode.ToLower(ra)), int64(unicode.ToLower(rb))); r != 0 {
			return r
		}
		a, b = a[na:], b[nb:]
	}
	return cmpOrdered(int64(len(a)), int64(len(b)))
}

// key is a map key under which values that compare equal under c (for
// DISTINCT and GROUP BY) collide.
func (c Collation) key(v any) string {
	v = normalize(v)
	switch x := v.(type) {
	case nil:
		return "n"
	case string:
		if c == CaseInsensitive {
			return "s" + strings.ToLower(x)
		}
		return "s" + x
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<62 {
			return "i" + strconv.FormatInt(int64(x), 10)
		}
		return "f" + strconv.FormatFloat(x, 'g', -1, 64)
	}
	i, _ := intOf(v)
	return "i" + strconv.FormatInt(i, 10)
}

// normalize maps the Go values a caller's Env may hand back (ints of any
// width, []byte from database/sql, time.Time) onto the five kinds this
// package computes with: nil, int64, float64, string and bool.
func normalize(v any) any {
	switch x := v.(type) {
	case nil, int64, float64, string, bool:
		return v
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint:
		return normalize(uint64(x))
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		if x > math.MaxInt64 {
			return float64(x)
		}
		return int64(x)
	case float32:
		return float64(x)
	case []byte:
		if x == nil {
			return nil
		}
		return string(x)
	case time.Time:
		return x.Format(dateTimeLayout)
	}
	return v
}

// intOf returns v as an integer when it is one (int64, or bool as 1/0).
func intOf(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// ToFloat converts v to float64 as MySQL does in numeric context: bools are
// 1/0 and a string is read by its longest numeric prefix ("12abc" is 12,
// "abc" is 0). ok is false for NULL and for values of no SQL kind.
func ToFloat(v any) (float64, bool) {
	switch x := normalize(v).(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case string:
		f, _ := strconv.ParseFloat(numericPrefix(x, true), 64)
		return f, true // ParseFloat saturates to ±Inf on overflow, as MySQL does to ±DBL_MAX
	}
	return 0, false
}

// ToInt converts v to int64 as CAST(v AS SIGNED) does: floats round half
// away from zero, strings are read by their integer prefix ("1.9" is 1), and
// values out of range saturate. ok is false for NULL, NaN and values of no
// SQL kind.
func ToInt(v any) (int64, bool) {
	switch x := normalize(v).(type) {
	case int64:
		return x, true
	case bool:
		i, _ := intOf(x)
		return i, true
	case float64:
		if math.IsNaN(x) {
			return 0, false
		}
		return saturate(math.Round(x)), true
	case string:
		// On overflow ParseInt returns the saturated value; on an empty
		// prefix ("abc") it returns 0. Both are MySQL's answers.
		i, _ := strconv.ParseInt(numericPrefix(x, false), 10, 64)
		return i, true
	}
	return 0, false
}

// saturate converts an integral float64 to int64, clamping at the ends.
func saturate(f float64) int64 {
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// numericPrefix returns the longest prefix of s (after leading white space)
// that reads as a number: sign, digits and, when fraction is set, a decimal
// part and an exponent.
func numericPrefix(s string, fraction bool) string {
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	n := digits()
	if !fraction {
		return s[:i]
	}
	if i < len(s) && s[i] == '.' {
		i++
		n += digits()
	}
	if n == 0 {
		return ""
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		mark := i
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			i = mark
		}
	}
	return s[:i]
}

// ToString renders v as MySQL prints it in a text result: bools as 1/0,
// floats in their shortest form without a trailing ".0", NULL as "".
func ToString(v any) string {
	switch x := normalize(v).(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		if x {
			return "1"
		}
		return "0"
	case float64:
		return formatFloat(x)
	}
	return ""
}

// formatFloat prints like MySQL prints a DOUBLE: plain decimal notation for
// ordinary magnitudes, otherwise exponent notation without '+' ("1e20").
func formatFloat(f float64) string {
	if a := math.Abs(f); a != 0 && (a >= 1e15 || a < 1e-6) {
		return strings.Replace(strconv.FormatFloat(f, 'g', -1, 64), "e+", "e", 1)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// Truthy reports whether v counts as TRUE in a condition: non-zero numbers
// (strings by their numeric prefix, so 'abc' is false). isNull is set for
// NULL, which is neither true nor false.
func Truthy(v any) (truth bool, isNull bool) {
	if v = normalize(v); v == nil {
		return false, true
	}
	if b, ok := v.(bool); ok {
		return b, false
	}
	if i, ok := v.(int64); ok {
		return i != 0, false
	}
	f, ok := ToFloat(v)
	if !ok {
		return false, true
	}
	return f != 0, false
}
