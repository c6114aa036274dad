package eval

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/parser"
)

// ErrOutOfRange is a DOUBLE result that overflowed to infinity (MySQL error
// 1690, "DOUBLE value is out of range").
var ErrOutOfRange = errors.New("eval: DOUBLE value is out of range")

// arith applies + - * / DIV % with MySQL's typing: two integers stay integer
// (an overflow moves to float64 instead of failing as MySQL's BIGINT does),
// anything else is float64 with strings read by their numeric prefix; '/'
// is always float64 (MySQL answers DECIMAL). Division by zero is NULL.
func arith(op parser.Op, l, r any) (any, error) {
	if l == nil || r == nil {
		return nil, nil
	}
	li, lInt := intOf(l)
	ri, rInt := intOf(r)
	if lInt && rInt {
		if v, ok := intArith(op, li, ri); ok {
			return v, nil
		}
	}
	lf, _ := ToFloat(l)
	rf, _ := ToFloat(r)
	switch op {
	case parser.OpAdd:
		return checkFloat(lf + rf)
	case parser.OpSub:
		return checkFloat(lf - rf)
	case parser.OpMul:
		return checkFloat(lf * rf)
	case parser.OpDiv:
		if rf == 0 {
			return nil, nil
		}
		return checkFloat(lf / rf)
	case parser.OpIntDiv:
		if rf == 0 {
			return nil, nil
		}
		q := math.Trunc(lf / rf)
		if q >= math.MaxInt64 || q < math.MinInt64 || math.IsNaN(q) {
			return nil, fmt.Errorf("eval: BIGINT value is out of range in %v DIV %v", ToString(l), ToString(r))
		}
		return int64(q), nil
	case parser.OpMod:
		if rf == 0 {
			return nil, nil
		}
		return checkFloat(math.Mod(lf, rf))
	}
	return nil, unsupported("operator %q", op)
}

// intArith is integer arithmetic; ok is false when the operation must be
// done in float64 instead (overflow, or '/').
func intArith(op parser.Op, a, b int64) (v any, ok bool) {
	switch op {
	case parser.OpAdd:
		c := a + b
		return c, (a^c)&(b^c) >= 0 // overflow iff the sign of both operands differs from c's
	case parser.OpSub:
		c := a - b
		return c, (a^b)&(a^c) >= 0
	case parser.OpMul:
		if a == 0 || b == 0 {
			return int64(0), true
		}
		c := a * b
		return c, c/b == a && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64)
	case parser.OpIntDiv:
		if b == 0 {
			return nil, true
		}
		if a == math.MinInt64 && b == -1 {
			return nil, false
		}
		return a / b, true
	case parser.OpMod:
		if b == 0 {
			return nil, true
		}
		return a % b, true // Go's % takes the dividend's sign, as MySQL's MOD does
	}
	return nil, false
}

// checkFloat turns NaN into NULL and an infinity into ErrOutOfRange.
func checkFloat(f float64) (any, error) {
	switch {
	case math.IsNaN(f):
		return nil, nil
	case math.IsInf(f, 0):
		return nil, ErrOutOfRange
	}
	return f, nil
}

// roundFloat rounds x to d decimals (d < 0 rounds left of the point), half
// away from zero, or truncates toward zero when trunc is set. It works on
// the shortest decimal text of x, so ROUND(2.675, 2) is 2.68 as for MySQL's
// DECIMAL, not 2.67 as the binary value 2.67499999... would give.
func roundFloat(x float64, d int64, trunc bool) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
		return x
	}
	neg := x < 0
	mant, expText, _ := strings.Cut(strconv.FormatFloat(math.Abs(x), 'e', -1, 64), "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	// digits is d1 d2 d3 ... with the decimal point after exp+1 of them.
	keep := int64(exp) + 1 + d
	if keep >= int64(len(digits)) {
		return x
	}
	var n uint64
	if keep > 0 {
		n, _ = strconv.ParseUint(digits[:keep], 10, 64) // at most 17 digits
	}
	if keep >= 0 && !trunc && digits[keep] >= '5' {
		n++
	}
	f, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", n, -d), 64)
	if neg {
		return -f
	}
	return f
}

// roundInt rounds (or truncates) an integer to d decimals; only d < 0
// changes it. The result leaves int64 only on overflow.
func roundInt(x, d int64, trunc bool) any {
	if d >= 0 {
		return x
	}
	if d < -18 {
		return int64(0)
	}
	p := int64(1)
	for range -d {
		p *= 10
	}
	q, r := x/p, x%p
	if !trunc && 2*absInt(r) >= p {
		if x < 0 {
			q--
		} else {
			q++
		}
	}
	if v, ok := intArith(parser.OpMul, q, p); ok {
		return v
	}
	return float64(q) * float64(p)
}

func absInt(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
