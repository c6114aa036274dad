package parser

import (
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// TiDB's value driver (test_driver) stores decimal literals in a MyDecimal
// of nine 9-digit words and panics when a literal needs more; the parser
// calls it through the ast.NewDecimal hook. Wrapping the hook turns such a
// literal into a parse error ("decimal literal: ...") instead.
func init() {
	driverDecimal := ast.NewDecimal
	ast.NewDecimal = func(s string) (any, error) {
		if !decimalFits(s) {
			return nil, fmt.Errorf("%.40q... has more digits than a DECIMAL holds", s)
		}
		return driverDecimal(s)
	}
}

// decimalFits mirrors MyDecimal.FromString's capacity check: the integer and
// fraction digits, each rounded up to whole 9-digit words, must fit in 9
// words, and there must be at least one digit.
func decimalFits(s string) bool {
	const digitsPerWord, words = 9, 9
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	intDigits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		intDigits++
		i++
	}
	fracDigits := 0
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			fracDigits++
		}
	}
	wordsOf := func(d int) int { return (d + digitsPerWord - 1) / digitsPerWord }
	return intDigits+fracDigits > 0 && wordsOf(intDigits)+wordsOf(fracDigits) <= words
}
