// Package eval evaluates expressions of the dialect-neutral query model
// (package parser) with MySQL's semantics: NULL propagation and three-valued
// logic, numeric coercion of strings, division by zero as NULL. The proxy
// uses it to post-process differentially private answers (HAVING, ORDER BY,
// arithmetic over noisy aggregates) and to answer catalog queries and
// SELECTs without FROM over small in-memory tables (Select). It never sees
// private rows: aggregates over private data are answered by the caller
// through Env.Call.
//
// Values are nil (NULL), int64, float64, string or bool; other Go values an
// Env returns ([]byte, int32, time.Time, ...) are mapped onto these first.
package eval

import (
	"fmt"
	"math"
	"strings"

	"github.com/dpproxy/dpproxy/parser"
)

// Env resolves what an expression refers to outside itself.
type Env interface {
	// Column resolves a column in the current row.
	Column(ref *parser.ColumnRef) (any, error)
	// Variable resolves @@system or @user variables.
	Variable(v *parser.Variable) (any, error)
	// Param resolves the 0-based placeholder index.
	Param(index int) (any, error)
	// Call lets the caller answer a function before the built-ins: the
	// engine returns noisy aggregates this way, the session DATABASE(),
	// USER(), VERSION(), CONNECTION_ID(). handled=false falls through to the
	// built-ins. Arguments are not evaluated; evaluate them with Eval.
	Call(f *parser.Func) (v any, handled bool, err error)
}

// UnsupportedError is a construct the evaluator does not implement.
type UnsupportedError struct {
	What string // "function FOO", "subqueries", ...
}

func (e *UnsupportedError) Error() string {
	return e.What + " is not supported by dpproxy"
}

func unsupported(format string, args ...any) error {
	return &UnsupportedError{What: fmt.Sprintf(format, args...)}
}

// Eval evaluates e in env. env may be nil for constant expressions.
func Eval(e parser.Expr, env Env) (any, error) {
	if env == nil {
		env = noEnv{}
	}
	ev := &evaluator{env: env, coll: collationOf(env)}
	return ev.eval(e)
}

type evaluator struct {
	env  Env
	coll Collation
}

func (ev *evaluator) eval(e parser.Expr) (any, error) {
	switch x := e.(type) {
	case nil:
		return nil, fmt.Errorf("eval: missing expression")
	case *parser.Literal:
		return normalize(x.Value), nil
	case *parser.ColumnRef:
		v, err := ev.env.Column(x)
		return normalize(v), err
	case *parser.Variable:
		v, err := ev.env.Variable(x)
		return normalize(v), err
	case *parser.Param:
		v, err := ev.env.Param(x.Index)
		return normalize(v), err
	case *parser.Unary:
		return ev.unary(x)
	case *parser.Binary:
		return ev.binary(x)
	case *parser.Func:
		return ev.call(x)
	case *parser.Case:
		return ev.caseExpr(x)
	case *parser.Between:
		return ev.between(x)
	case *parser.In:
		return ev.in(x)
	case *parser.IsNull:
		v, err := ev.eval(x.X)
		if err != nil {
			return nil, err
		}
		return (v == nil) != x.Not, nil
	case *parser.IsBool:
		v, err := ev.eval(x.X)
		if err != nil {
			return nil, err
		}
		t, null := Truthy(v)
		return (!null && t == x.Value) != x.Not, nil
	case *parser.Like:
		return ev.like(x)
	case *parser.Cast:
		v, err := ev.eval(x.X)
		if err != nil {
			return nil, err
		}
		return castTo(v, x.Type)
	case *parser.Subquery:
		return nil, unsupported("subqueries")
	case *parser.Row:
		return nil, unsupported("row constructors")
	case *parser.Interval:
		return nil, unsupported("INTERVAL arithmetic")
	}
	return nil, unsupported("expression %T", e)
}

func (ev *evaluator) unary(u *parser.Unary) (any, error) {
	v, err := ev.eval(u.X)
	if err != nil || v == nil {
		return nil, err
	}
	switch u.Op {
	case parser.OpNot:
		t, _ := Truthy(v)
		return !t, nil
	case parser.OpNeg:
		if i, ok := intOf(v); ok {
			if i == math.MinInt64 {
				return -float64(i), nil
			}
			return -i, nil
		}
		f, _ := ToFloat(v)
		return -f, nil
	}
	return nil, unsupported("unary operator %q", u.Op)
}

func (ev *evaluator) binary(b *parser.Binary) (any, error) {
	switch b.Op {
	case parser.OpAnd, parser.OpOr:
		return ev.logic(b)
	}
	l, err := ev.eval(b.L)
	if err != nil {
		return nil, err
	}
	r, err := ev.eval(b.R)
	if err != nil {
		return nil, err
	}
	switch b.Op {
	case parser.OpNullEQ:
		if l == nil || r == nil {
			return l == nil && r == nil, nil
		}
		eq, _ := ev.coll.equal(l, r)
		return eq, nil
	case parser.OpEQ, parser.OpNE, parser.OpLT, parser.OpLE, parser.OpGT, parser.OpGE:
		c, null := ev.coll.cmp(l, r)
		if null {
			return nil, nil
		}
		return compareResult(b.Op, c), nil
	case parser.OpXor:
		lt, ln := Truthy(l)
		rt, rn := Truthy(r)
		if ln || rn {
			return nil, nil
		}
		return lt != rt, nil
	case parser.OpConcat:
		if l == nil || r == nil {
			return nil, nil
		}
		ls, rs := ToString(l), ToString(r)
		if len(ls)+len(rs) > maxStringResult {
			return nil, nil // as CONCAT past the cap
		}
		return ls + rs, nil
	case parser.OpRegex:
		return ev.regexp(l, r)
	case parser.OpBitAnd, parser.OpBitOr:
		if l == nil || r == nil {
			return nil, nil
		}
		li, _ := ToInt(l)
		ri, _ := ToInt(r)
		if b.Op == parser.OpBitAnd {
			return li & ri, nil
		}
		return li | ri, nil
	}
	return arith(b.Op, l, r)
}

func compareResult(op parser.Op, c int) bool {
	switch op {
	case parser.OpEQ:
		return c == 0
	case parser.OpNE:
		return c != 0
	case parser.OpLT:
		return c < 0
	case parser.OpLE:
		return c <= 0
	case parser.OpGT:
		return c > 0
	}
	return c >= 0 // OpGE
}

// logic is AND / OR in three-valued logic. The right side is skipped when the
// left decides the answer (FALSE AND x, TRUE OR x).
func (ev *evaluator) logic(b *parser.Binary) (any, error) {
	l, err := ev.eval(b.L)
	if err != nil {
		return nil, err
	}
	lt, ln := Truthy(l)
	decisive := b.Op == parser.OpOr // TRUE decides OR, FALSE decides AND
	if !ln && lt == decisive {
		return decisive, nil
	}
	r, err := ev.eval(b.R)
	if err != nil {
		return nil, err
	}
	rt, rn := Truthy(r)
	switch {
	case !rn && rt == decisive:
		return decisive, nil
	case ln || rn:
		return nil, nil
	}
	return !decisive, nil
}

func (ev *evaluator) caseExpr(c *parser.Case) (any, error) {
	var operand any
	if c.Operand != nil {
		v, err := ev.eval(c.Operand)
		if err != nil {
			return nil, err
		}
		operand = v
	}
	for _, w := range c.Whens {
		v, err := ev.eval(w.Cond)
		if err != nil {
			return nil, err
		}
		var hit bool
		if c.Operand != nil {
			eq, null := ev.coll.equal(operand, v)
			hit = eq && !null
		} else {
			t, null := Truthy(v)
			hit = t && !null
		}
		if hit {
			return ev.eval(w.Result)
		}
	}
	if c.Else == nil {
		return nil, nil
	}
	return ev.eval(c.Else)
}

func (ev *evaluator) between(b *parser.Between) (any, error) {
	vals, err := ev.evalAll([]parser.Expr{b.X, b.Lo, b.Hi})
	if err != nil {
		return nil, err
	}
	lo, loNull := ev.coll.cmp(vals[0], vals[1])
	hi, hiNull := ev.coll.cmp(vals[0], vals[2])
	// x >= lo AND x <= hi, in three-valued logic.
	var inRange bool
	switch {
	case (!loNull && lo < 0) || (!hiNull && hi > 0):
		inRange = false
	case loNull || hiNull:
		return nil, nil
	default:
		inRange = true
	}
	return inRange != b.Not, nil
}

// in is x IN (list): TRUE on a match, else NULL if x or any item is NULL,
// else FALSE. NOT IN negates that, keeping NULL.
func (ev *evaluator) in(in *parser.In) (any, error) {
	if in.Sub != nil {
		return nil, unsupported("subqueries")
	}
	x, err := ev.eval(in.X)
	if err != nil || x == nil {
		return nil, err
	}
	sawNull := false
	for _, e := range in.List {
		v, err := ev.eval(e)
		if err != nil {
			return nil, err
		}
		eq, null := ev.coll.equal(x, v)
		if null {
			sawNull = true
		} else if eq {
			return !in.Not, nil
		}
	}
	if sawNull {
		return nil, nil
	}
	return in.Not, nil
}

func (ev *evaluator) like(l *parser.Like) (any, error) {
	vals, err := ev.evalAll([]parser.Expr{l.X, l.Pattern})
	if err != nil {
		return nil, err
	}
	if vals[0] == nil || vals[1] == nil {
		return nil, nil
	}
	escape := '\\'
	if l.Escape != nil {
		e, err := ev.eval(l.Escape)
		if err != nil {
			return nil, err
		}
		switch r := []rune(ToString(e)); len(r) {
		case 0:
			escape = 0
		case 1:
			escape = r[0]
		default:
			return nil, fmt.Errorf("eval: the ESCAPE of LIKE must be one character, not %q", string(r))
		}
	}
	ci := l.CaseInsensitive || ev.coll == CaseInsensitive
	return Like(ToString(vals[0]), ToString(vals[1]), escape, ci) != l.Not, nil
}

func (ev *evaluator) evalAll(es []parser.Expr) ([]any, error) {
	vals := make([]any, len(es))
	for i, e := range es {
		v, err := ev.eval(e)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return vals, nil
}

// noEnv is the Env of constant expressions: it resolves nothing.
type noEnv struct{}

func (noEnv) Column(ref *parser.ColumnRef) (any, error) {
	return nil, fmt.Errorf("eval: unknown column %s", columnName(ref))
}

func (noEnv) Variable(v *parser.Variable) (any, error) {
	return nil, fmt.Errorf("eval: unknown variable %s", v.Name)
}

func (noEnv) Param(i int) (any, error) {
	return nil, fmt.Errorf("eval: no value for parameter %d", i+1)
}

func (noEnv) Call(*parser.Func) (any, bool, error) { return nil, false, nil }

func columnName(ref *parser.ColumnRef) string {
	parts := []string{ref.Schema, ref.Table, ref.Name}
	for len(parts) > 1 && parts[0] == "" {
		parts = parts[1:]
	}
	return "'" + strings.Join(parts, ".") + "'"
}
