package eval

import (
	"fmt"
	"strings"

	"github.com/dpproxy/dpproxy/parser"
)

// rowEnv is the Env of one row (or group) of a Select: columns come from the
// row, aggregates from the group, everything else from the outer Env.
type rowEnv struct {
	s       *scope
	row     []any   // nil for the empty group of an aggregate query over no rows
	group   [][]any // the rows aggregates run over
	grouped bool    // aggregates are allowed (select list, HAVING, ORDER BY of a grouped query)
	aliases map[string]any
}

func (e *rowEnv) Collation() Collation { return e.s.coll }

func (e *rowEnv) Column(ref *parser.ColumnRef) (any, error) {
	if ref.Table == "" && e.aliases != nil {
		if v, ok := e.aliases[strings.ToLower(ref.Name)]; ok {
			return v, nil
		}
	}
	i, err := e.s.column(ref)
	if err != nil || e.row == nil {
		return nil, err
	}
	return e.row[i], nil
}

func (e *rowEnv) Variable(v *parser.Variable) (any, error) { return e.s.outer.Variable(v) }

func (e *rowEnv) Param(i int) (any, error) { return e.s.outer.Param(i) }

func (e *rowEnv) Call(f *parser.Func) (any, bool, error) {
	if !IsAggregate(f.Name) || f.Over {
		return e.s.outer.Call(f)
	}
	if !e.grouped {
		return nil, false, fmt.Errorf("eval: invalid use of group function %s()", strings.ToUpper(f.Name))
	}
	v, err := e.aggregate(f)
	return v, true, err
}

// aggregate computes COUNT, SUM, AVG, MIN or MAX over the group, skipping
// NULLs; over no values all but COUNT are NULL.
func (e *rowEnv) aggregate(f *parser.Func) (any, error) {
	name := strings.ToUpper(f.Name)
	switch f.Name {
	case "count", "sum", "avg", "min", "max":
	default:
		return nil, unsupported("aggregate %s() in catalog queries", name)
	}
	if f.Star {
		if f.Name != "count" {
			return nil, fmt.Errorf("eval: %s(*) is not valid SQL", name)
		}
		return int64(len(e.group)), nil
	}
	if len(f.Args) != 1 {
		return nil, fmt.Errorf("eval: %s() takes one argument, not %d", name, len(f.Args))
	}
	inner := &rowEnv{s: e.s} // not grouped: a nested aggregate is an error
	var vals []any
	seen := map[string]bool{}
	for _, r := range e.group {
		inner.row = r
		v, err := Eval(f.Args[0], inner)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		if f.Distinct {
			k := e.s.coll.key(v)
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		vals = append(vals, v)
	}
	if f.Name == "count" {
		return int64(len(vals)), nil
	}
	if len(vals) == 0 {
		return nil, nil
	}
	switch f.Name {
	case "min", "max":
		keys := unifyKinds(vals)
		best := 0
		for i := range keys {
			c := e.s.coll.Compare(keys[i], keys[best])
			if (f.Name == "min" && c < 0) || (f.Name == "max" && c > 0) {
				best = i
			}
		}
		return vals[best], nil
	}
	var sum any = int64(0)
	for _, v := range vals {
		var err error
		if sum, err = arith(parser.OpAdd, sum, v); err != nil {
			return nil, fmt.Errorf("eval: %s(): %w", name, err)
		}
	}
	if f.Name == "sum" {
		return sum, nil
	}
	return arith(parser.OpDiv, sum, int64(len(vals)))
}

// hasAggregate reports whether e calls an aggregate function outside a
// window (OVER) and outside a subquery.
func hasAggregate(e parser.Expr) bool {
	switch x := e.(type) {
	case *parser.Func:
		if IsAggregate(x.Name) && !x.Over {
			return true
		}
		return anyAggregate(x.Args...)
	case *parser.Unary:
		return hasAggregate(x.X)
	case *parser.Binary:
		return anyAggregate(x.L, x.R)
	case *parser.Case:
		if anyAggregate(x.Operand, x.Else) {
			return true
		}
		for _, w := range x.Whens {
			if anyAggregate(w.Cond, w.Result) {
				return true
			}
		}
	case *parser.Between:
		return anyAggregate(x.X, x.Lo, x.Hi)
	case *parser.In:
		return hasAggregate(x.X) || anyAggregate(x.List...)
	case *parser.IsNull:
		return hasAggregate(x.X)
	case *parser.IsBool:
		return hasAggregate(x.X)
	case *parser.Like:
		return anyAggregate(x.X, x.Pattern, x.Escape)
	case *parser.Cast:
		return hasAggregate(x.X)
	case *parser.Row:
		return anyAggregate(x.Items...)
	case *parser.Interval:
		return hasAggregate(x.Value)
	}
	return false
}

func anyAggregate(es ...parser.Expr) bool {
	for _, e := range es {
		if e != nil && hasAggregate(e) {
			return true
		}
	}
	return false
}
