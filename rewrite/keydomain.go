package rewrite

import (
	"math"
	"sort"

	"github.com/dpproxy/dpproxy/eval"
	"github.com/dpproxy/dpproxy/parser"
)

// maxDerivedDomain bounds the domain enumerated to derive a key's values.
const maxDerivedDomain = 10000

// keyDomain derives the public values of an expression key when the
// expression reads one column whose domain is public and small: the
// column's public values, or the integers within an integer column's
// bounds. The key's values are then the expression evaluated on that domain
// — a function of public information only — so every one is released, as
// for a public column (e.g. FLOOR(age/10)*10 over age in [0, 100] gives
// 0, 10, ..., 100). It returns nil when no such domain exists; the key then
// needs partition selection.
func (a *analysis) keyDomain(e parser.Expr) []any {
	if f, ok := e.(*parser.Func); ok {
		if d, isDatePart := a.dateKeyDomain(f); isDatePart {
			return d
		}
	}
	var cols []string
	walk(e, func(n parser.Expr) bool {
		if ref, ok := n.(*parser.ColumnRef); ok {
			name, _ := a.column(ref)
			if len(cols) == 0 || cols[0] != name {
				cols = append(cols, name)
			}
			return false
		}
		return true
	})
	if len(cols) != 1 {
		return nil
	}
	col, _ := a.table.Column(cols[0])
	if col == nil {
		return nil
	}
	var domain []any
	switch {
	case len(col.PublicValues) > 0:
		domain = col.PublicValues
	case col.Bounded() && col.Type == "int":
		lo, hi := math.Ceil(*col.Lower), math.Floor(*col.Upper)
		if hi-lo+1 > maxDerivedDomain {
			return nil
		}
		for v := lo; v <= hi; v++ {
			domain = append(domain, int64(v))
		}
	default:
		return nil
	}
	seen := map[string]bool{}
	var out []any
	for _, v := range domain {
		got, err := eval.Eval(e, domainEnv{a: a, column: cols[0], value: v})
		if err != nil {
			return nil // an expression the proxy cannot evaluate: select partitions instead
		}
		if got == nil {
			continue
		}
		if f, ok := got.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			got = int64(f)
		}
		k := eval.ToString(got)
		if !seen[k] {
			seen[k] = true
			out = append(out, got)
		}
	}
	if len(out) == 0 || len(out) > maxDerivedDomain {
		return nil
	}
	sort.SliceStable(out, func(i, j int) bool { return eval.Compare(out[i], out[j]) < 0 })
	return out
}

// domainEnv evaluates a key expression for one value of its one column
// (named as the analysis resolves it: "p.educ" in a join).
type domainEnv struct {
	a      *analysis
	column string
	value  any
}

func (d domainEnv) Column(ref *parser.ColumnRef) (any, error) {
	if name, err := d.a.column(ref); err == nil && name == d.column {
		return d.value, nil
	}
	return nil, &UnknownColumnError{Column: ref.Name}
}

func (d domainEnv) Variable(*parser.Variable) (any, error) {
	return nil, refuse("variables are not allowed in a differentially private query")
}

func (d domainEnv) Param(i int) (any, error) {
	if i < len(d.a.in.Params) {
		return d.a.in.Params[i], nil
	}
	return nil, unsupported("parameter %d has no value", i+1)
}

func (d domainEnv) Call(*parser.Func) (any, bool, error) { return nil, false, nil }
