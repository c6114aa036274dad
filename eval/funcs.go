package eval

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dpproxy/dpproxy/parser"
)

// aggregates are the aggregate function names of MySQL and PostgreSQL.
var aggregates = map[string]bool{
	"count": true, "sum": true, "avg": true, "min": true, "max": true,
	"group_concat": true, "string_agg": true, "array_agg": true,
	"std": true, "stddev": true, "stddev_pop": true, "stddev_samp": true,
	"variance": true, "var_pop": true, "var_samp": true,
	"bit_and": true, "bit_or": true, "bit_xor": true, "bool_and": true, "bool_or": true, "every": true,
	"json_arrayagg": true, "json_objectagg": true, "json_agg": true,
	"percentile_cont": true, "percentile_disc": true, "median": true, "mode": true,
}

// IsAggregate reports whether name (lower case) is an aggregate function.
func IsAggregate(name string) bool { return aggregates[name] }

// builtin is a scalar function over evaluated arguments.
type builtin struct {
	min, max int // argument count; max -1 is unbounded
	// strict functions are NULL when any argument is NULL, without running fn.
	strict bool
	fn     func(ev *evaluator, args []any) (any, error)
}

var builtins = map[string]builtin{
	"nullif":    {2, 2, false, fnNullIf},
	"concat":    {1, -1, true, fnConcat},
	"concat_ws": {2, -1, false, fnConcatWS},
	"lower":     {1, 1, true, str1(strings.ToLower)},
	"lcase":     {1, 1, true, str1(strings.ToLower)},
	"upper":     {1, 1, true, str1(strings.ToUpper)},
	"ucase":     {1, 1, true, str1(strings.ToUpper)},
	"ltrim":     {1, 1, true, str1(func(s string) string { return strings.TrimLeft(s, " ") })},
	"rtrim":     {1, 1, true, str1(func(s string) string { return strings.TrimRight(s, " ") })},
	"trim":      {1, 3, true, fnTrim},
	"length":    {1, 1, true, func(_ *evaluator, a []any) (any, error) { return int64(len(ToString(a[0]))), nil }},
	"octet_length": {1, 1, true, func(_ *evaluator, a []any) (any, error) {
		return int64(len(ToString(a[0]))), nil
	}},
	"char_length":      {1, 1, true, fnCharLength},
	"character_length": {1, 1, true, fnCharLength},
	"substring":        {2, 3, true, fnSubstring},
	"substr":           {2, 3, true, fnSubstring},
	"mid":              {3, 3, true, fnSubstring},
	"replace":          {3, 3, true, fnReplace},
	"abs":              {1, 1, true, fnAbs},
	"round":            {1, 2, true, fnRound(false)},
	"truncate":         {2, 2, true, fnRound(true)},
	"floor":            {1, 1, true, fnFloorCeil(math.Floor)},
	"ceil":             {1, 1, true, fnFloorCeil(math.Ceil)},
	"ceiling":          {1, 1, true, fnFloorCeil(math.Ceil)},
	"sqrt":             {1, 1, true, float1(math.Sqrt, 0, true)},
	"exp":              {1, 1, true, float1(math.Exp, math.Inf(-1), true)},
	"ln":               {1, 1, true, float1(math.Log, 0, false)},
	"log10":            {1, 1, true, float1(math.Log10, 0, false)},
	"log2":             {1, 1, true, float1(math.Log2, 0, false)},
	"log":              {1, 2, true, fnLog},
	"pow":              {2, 2, true, fnPow},
	"power":            {2, 2, true, fnPow},
	"sign":             {1, 1, true, fnSign},
	"mod": {2, 2, true, func(_ *evaluator, a []any) (any, error) {
		return arith(parser.OpMod, a[0], a[1])
	}},
	"greatest":          {2, -1, true, fnExtreme(1)},
	"least":             {2, -1, true, fnExtreme(-1)},
	"now":               {0, 1, false, clock(dateTimeLayout)},
	"current_timestamp": {0, 1, false, clock(dateTimeLayout)},
	"localtime":         {0, 1, false, clock(dateTimeLayout)},
	"localtimestamp":    {0, 1, false, clock(dateTimeLayout)},
	"sysdate":           {0, 1, false, clock(dateTimeLayout)},
	"curdate":           {0, 0, false, clock(dateLayout)},
	"current_date":      {0, 0, false, clock(dateLayout)},
	"curtime":           {0, 1, false, clock("15:04:05")},
	"current_time":      {0, 1, false, clock("15:04:05")},
}

// call answers a function: the Env first, then the lazy conditionals, then
// the built-ins.
func (ev *evaluator) call(f *parser.Func) (any, error) {
	name := strings.ToUpper(f.Name)
	if f.Over {
		return nil, unsupported("window function %s() OVER", name)
	}
	v, handled, err := ev.env.Call(f)
	if err != nil {
		return nil, err
	}
	if handled {
		return normalize(v), nil
	}
	if IsAggregate(f.Name) {
		return nil, fmt.Errorf("eval: aggregate %s() cannot be computed here", name)
	}
	if f.Star || f.Distinct {
		return nil, fmt.Errorf("eval: %s() takes no * or DISTINCT", name)
	}
	switch f.Name {
	case "if", "ifnull", "coalesce", "nvl":
		return ev.conditional(f)
	}
	b, ok := builtins[f.Name]
	if !ok {
		return nil, unsupported("function %s", name)
	}
	if err := arity(f, b.min, b.max); err != nil {
		return nil, err
	}
	args, err := ev.evalAll(f.Args)
	if err != nil {
		return nil, err
	}
	if b.strict {
		for _, a := range args {
			if a == nil {
				return nil, nil
			}
		}
	}
	return b.fn(ev, args)
}

func arity(f *parser.Func, min, max int) error {
	if n := len(f.Args); n < min || (max >= 0 && n > max) {
		return fmt.Errorf("eval: incorrect parameter count in the call to function %s (%d arguments)", strings.ToUpper(f.Name), n)
	}
	return nil
}

// conditional evaluates IF, IFNULL and COALESCE lazily: only the arguments
// that decide the answer run, as in MySQL.
func (ev *evaluator) conditional(f *parser.Func) (any, error) {
	switch f.Name {
	case "if":
		if err := arity(f, 3, 3); err != nil {
			return nil, err
		}
		c, err := ev.eval(f.Args[0])
		if err != nil {
			return nil, err
		}
		if t, null := Truthy(c); t && !null {
			return ev.eval(f.Args[1])
		}
		return ev.eval(f.Args[2])
	case "ifnull", "nvl":
		if err := arity(f, 2, 2); err != nil {
			return nil, err
		}
	default: // coalesce
		if err := arity(f, 1, -1); err != nil {
			return nil, err
		}
	}
	for _, a := range f.Args {
		v, err := ev.eval(a)
		if err != nil || v != nil {
			return v, err
		}
	}
	return nil, nil
}

func fnNullIf(ev *evaluator, a []any) (any, error) {
	if eq, null := ev.coll.equal(a[0], a[1]); eq && !null {
		return nil, nil
	}
	return a[0], nil
}

func fnConcat(_ *evaluator, a []any) (any, error) {
	var b strings.Builder
	for _, v := range a {
		s := ToString(v)
		if b.Len()+len(s) > maxStringResult {
			return nil, nil // NULL past the cap, as MySQL does past max_allowed_packet
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// fnConcatWS is CONCAT_WS(sep, ...): NULL separator gives NULL, NULL items
// are skipped.
func fnConcatWS(_ *evaluator, a []any) (any, error) {
	if a[0] == nil {
		return nil, nil
	}
	var parts []string
	sep := ToString(a[0])
	total := 0
	for _, v := range a[1:] {
		if v != nil {
			parts = append(parts, ToString(v))
			total += len(parts[len(parts)-1]) + len(sep)
			if total > maxStringResult {
				return nil, nil // NULL past the cap, as MySQL does past max_allowed_packet
			}
		}
	}
	return strings.Join(parts, sep), nil
}

func str1(f func(string) string) func(*evaluator, []any) (any, error) {
	return func(_ *evaluator, a []any) (any, error) { return f(ToString(a[0])), nil }
}

func fnCharLength(_ *evaluator, a []any) (any, error) {
	return int64(utf8.RuneCountInString(ToString(a[0]))), nil
}

// fnTrim is TRIM(str [, remstr [, 'both'|'leading'|'trailing']]): MySQL's
// TRIM([BOTH|LEADING|TRAILING] remstr FROM str) removes whole repetitions of
// remstr (default one space), not a set of characters.
func fnTrim(_ *evaluator, a []any) (any, error) {
	s, rem, dir := ToString(a[0]), " ", "both"
	if len(a) > 1 {
		rem = ToString(a[1])
	}
	if len(a) > 2 {
		dir = strings.ToLower(ToString(a[2]))
	}
	if rem == "" {
		return s, nil
	}
	switch dir {
	case "both", "leading", "trailing":
	default:
		return nil, fmt.Errorf("eval: TRIM direction must be BOTH, LEADING or TRAILING, not %q", dir)
	}
	if dir != "trailing" {
		for strings.HasPrefix(s, rem) {
			s = s[len(rem):]
		}
	}
	if dir != "leading" {
		for strings.HasSuffix(s, rem) {
			s = s[:len(s)-len(rem)]
		}
	}
	return s, nil
}

// fnSubstring is MySQL's SUBSTRING(s, pos[, len]) by characters: pos is
// 1-based, negative counts from the end, 0 gives ”.
func fnSubstring(_ *evaluator, a []any) (any, error) {
	r := []rune(ToString(a[0]))
	n := int64(len(r))
	pos, _ := ToInt(a[1])
	var start int64
	switch {
	case pos > 0 && pos <= n:
		start = pos - 1
	case pos < 0 && -pos <= n:
		start = n + pos
	default:
		return "", nil
	}
	end := n
	if len(a) > 2 {
		l, _ := ToInt(a[2])
		if l <= 0 {
			return "", nil
		}
		if l < n-start {
			end = start + l
		}
	}
	return string(r[start:end]), nil
}

func fnReplace(_ *evaluator, a []any) (any, error) {
	s, from := ToString(a[0]), ToString(a[1])
	if from == "" {
		return s, nil
	}
	// The result's length is known before it is built: refuse it there,
	// not after allocating it (nested REPLACEs grow geometrically).
	to := ToString(a[2])
	if n := int64(len(s)) + int64(strings.Count(s, from))*(int64(len(to))-int64(len(from))); n > maxStringResult {
		return nil, nil // NULL past the cap, as MySQL does past max_allowed_packet
	}
	return strings.ReplaceAll(s, from, to), nil
}

func fnAbs(_ *evaluator, a []any) (any, error) {
	if i, ok := intOf(a[0]); ok {
		if i == math.MinInt64 {
			return -float64(i), nil
		}
		return absInt(i), nil
	}
	f, _ := ToFloat(a[0])
	return math.Abs(f), nil
}

// fnRound is ROUND(x[, d]) (half away from zero, as MySQL rounds exact
// values) or TRUNCATE(x, d) (toward zero). Integers stay integers.
func fnRound(trunc bool) func(*evaluator, []any) (any, error) {
	return func(_ *evaluator, a []any) (any, error) {
		var d int64
		if len(a) > 1 {
			d, _ = ToInt(a[1])
		}
		if i, ok := intOf(a[0]); ok {
			return roundInt(i, d, trunc), nil
		}
		f, _ := ToFloat(a[0])
		return roundFloat(f, d, trunc), nil
	}
}

// fnFloorCeil keeps integers, and returns an integer for a float whose
// result fits in int64 (MySQL's FLOOR of a DECIMAL is a BIGINT).
func fnFloorCeil(op func(float64) float64) func(*evaluator, []any) (any, error) {
	return func(_ *evaluator, a []any) (any, error) {
		if i, ok := intOf(a[0]); ok {
			return i, nil
		}
		f, _ := ToFloat(a[0])
		r := op(f)
		if r >= math.MinInt64 && r < math.MaxInt64 {
			return int64(r), nil
		}
		return r, nil
	}
}

// float1 applies a float function whose domain is x > lo (or x >= lo when
// closed); outside it the answer is NULL, as in MySQL.
func float1(f func(float64) float64, lo float64, closed bool) func(*evaluator, []any) (any, error) {
	return func(_ *evaluator, a []any) (any, error) {
		x, _ := ToFloat(a[0])
		if x < lo || (x == lo && !closed) {
			return nil, nil
		}
		return checkFloat(f(x))
	}
}

// fnLog is LOG(x) (natural) or LOG(b, x) (base b); NULL outside the domain.
func fnLog(_ *evaluator, a []any) (any, error) {
	x, _ := ToFloat(a[len(a)-1])
	if x <= 0 {
		return nil, nil
	}
	if len(a) == 1 {
		return math.Log(x), nil
	}
	b, _ := ToFloat(a[0])
	if b <= 0 || b == 1 {
		return nil, nil
	}
	return checkFloat(math.Log(x) / math.Log(b))
}

func fnPow(_ *evaluator, a []any) (any, error) {
	x, _ := ToFloat(a[0])
	y, _ := ToFloat(a[1])
	return checkFloat(math.Pow(x, y))
}

func fnSign(_ *evaluator, a []any) (any, error) {
	f, _ := ToFloat(a[0])
	switch {
	case f > 0:
		return int64(1), nil
	case f < 0:
		return int64(-1), nil
	}
	return int64(0), nil
}

// fnExtreme is GREATEST (dir 1) or LEAST (dir -1) under the comparison rules
// of '<'; the winning argument keeps its type.
func fnExtreme(dir int) func(*evaluator, []any) (any, error) {
	return func(ev *evaluator, a []any) (any, error) {
		best := a[0]
		for _, v := range a[1:] {
			if c, _ := ev.coll.cmp(v, best); c*dir > 0 {
				best = v
			}
		}
		return best, nil
	}
}

// clock answers NOW() and friends from the local clock when the Env did not
// (a session may pin the time of a statement by answering them itself).
func clock(layout string) func(*evaluator, []any) (any, error) {
	return func(_ *evaluator, _ []any) (any, error) {
		return time.Now().Format(layout), nil
	}
}

// regexp is x REGEXP pattern with Go's RE2 syntax (MySQL uses ICU; the
// common subset agrees), case-insensitive under the CaseInsensitive collation.
func (ev *evaluator) regexp(x, pattern any) (any, error) {
	if x == nil || pattern == nil {
		return nil, nil
	}
	p := ToString(pattern)
	if ev.coll == CaseInsensitive {
		p = "(?i)" + p
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("eval: bad regular expression %q: %w", ToString(pattern), err)
	}
	return re.MatchString(ToString(x)), nil
}
