package rewrite

import (
	"math"
	"strings"

	"github.com/dpproxy/dpproxy/parser"
)

// A generator of random row-level expressions over the columns of the
// scratch table of the totality tests (total_test.go), typed so that
// PostgreSQL accepts most of them: the property is that whatever the
// renderer lets through runs on adversarial rows without an error.

// genSource is where the generator takes its choices from: math/rand for
// the property test, the fuzzer's bytes for FuzzTotalSQL.
type genSource interface{ Intn(n int) int }

// byteSource reads choices from bytes, then zeros.
type byteSource struct {
	b []byte
	i int
}

func (s *byteSource) Intn(n int) int {
	if n <= 1 {
		return 0
	}
	v := 0
	if s.i < len(s.b) {
		v = int(s.b[s.i])
		s.i++
	}
	return v % n
}

type exprGen struct{ src genSource }

type genKind int

const (
	genNum genKind = iota
	genStr
	genBool
	genDate
)

func (g *exprGen) pick(n int) int { return g.src.Intn(n) }

func col(name string) parser.Expr { return &parser.ColumnRef{Name: name} }
func lit(v any) parser.Expr       { return &parser.Literal{Value: v} }

var (
	numColumns  = []string{"i", "f", "big", "pid", "u", "age", "income"}
	strColumns  = []string{"s"}
	dateColumns = []string{"d", "d2"}
	numLiterals = []any{int64(0), int64(1), int64(-1), int64(2), int64(10), int64(1000), 0.5, -2.5, 1e10, int64(math.MaxInt64), int64(math.MinInt64 + 1), 1e300, 1e-300}
	strLiterals = []any{"", "a", "abc", "aaaaaaaaaa", "12", " 12 ", "1e999", "%", "2020-01-01"}
)

// expr is a random expression of kind k at most depth deep.
func (g *exprGen) expr(k genKind, depth int) parser.Expr {
	if depth <= 0 || g.pick(4) == 0 {
		return g.leaf(k)
	}
	switch k {
	case genNum:
		return g.num(depth - 1)
	case genStr:
		return g.str(depth - 1)
	case genBool:
		return g.boolean(depth - 1)
	}
	return g.leaf(genDate)
}

func (g *exprGen) leaf(k genKind) parser.Expr {
	switch k {
	case genNum:
		if g.pick(2) == 0 {
			return col(numColumns[g.pick(len(numColumns))])
		}
		return lit(numLiterals[g.pick(len(numLiterals))])
	case genStr:
		if g.pick(2) == 0 {
			return col(strColumns[g.pick(len(strColumns))])
		}
		return lit(strLiterals[g.pick(len(strLiterals))])
	case genDate:
		return col(dateColumns[g.pick(len(dateColumns))])
	}
	return &parser.Binary{Op: parser.OpGT, L: g.leaf(genNum), R: g.leaf(genNum)}
}

func (g *exprGen) num(d int) parser.Expr {
	n := func() parser.Expr { return g.expr(genNum, d) }
	ops := []parser.Op{parser.OpAdd, parser.OpSub, parser.OpMul, parser.OpDiv, parser.OpMod, parser.OpIntDiv}
	switch g.pick(14) {
	case 0, 1, 2:
		return &parser.Binary{Op: ops[g.pick(len(ops))], L: n(), R: n()}
	case 3:
		return &parser.Unary{Op: parser.OpNeg, X: n()}
	case 4:
		names := []string{"abs", "sign", "floor", "ceil", "round", "sqrt", "exp", "ln", "log"}
		return &parser.Func{Name: names[g.pick(len(names))], Args: []parser.Expr{n()}}
	case 5:
		names := []string{"mod", "round", "log", "greatest", "least", "coalesce", "nullif"}
		return &parser.Func{Name: names[g.pick(len(names))], Args: []parser.Expr{n(), n()}}
	case 6:
		exps := []any{int64(2), int64(3), int64(-1), int64(-2), 0.5, -0.5, 1.5, int64(40)}
		return &parser.Func{Name: "power", Args: []parser.Expr{n(), lit(exps[g.pick(len(exps))])}}
	case 7:
		return &parser.Case{Whens: []parser.When{{Cond: g.expr(genBool, d), Result: n()}}, Else: n()}
	case 8:
		types := []string{"int", "float"}
		src := n()
		if g.pick(2) == 0 {
			src = g.expr(genStr, d)
		}
		return &parser.Cast{X: src, Type: types[g.pick(2)]}
	case 9:
		return &parser.Func{Name: "length", Args: []parser.Expr{g.expr(genStr, d)}}
	case 10:
		units := []string{"year", "month", "day"}
		return &parser.Func{Name: units[g.pick(3)], Args: []parser.Expr{g.expr(genDate, d)}}
	case 11:
		return &parser.Binary{Op: parser.OpSub, L: g.expr(genDate, d), R: g.expr(genDate, d)}
	case 12:
		return &parser.Func{Name: "if", Args: []parser.Expr{g.expr(genBool, d), n(), n()}}
	}
	return g.leaf(genNum)
}

func (g *exprGen) str(d int) parser.Expr {
	s := func() parser.Expr { return g.expr(genStr, d) }
	switch g.pick(8) {
	case 0:
		names := []string{"lower", "upper", "trim", "ltrim", "rtrim"}
		return &parser.Func{Name: names[g.pick(len(names))], Args: []parser.Expr{s()}}
	case 1:
		return &parser.Func{Name: "concat", Args: []parser.Expr{s(), s(), g.expr(genNum, d)}}
	case 2:
		from := strLiterals[g.pick(len(strLiterals))]
		to := strLiterals[g.pick(len(strLiterals))]
		return &parser.Func{Name: "replace", Args: []parser.Expr{s(), lit(from), lit(to)}}
	case 3:
		return &parser.Func{Name: "substring", Args: []parser.Expr{s(), g.expr(genNum, d), g.expr(genNum, d)}}
	case 4:
		names := []string{"left", "right"}
		return &parser.Func{Name: names[g.pick(2)], Args: []parser.Expr{s(), g.expr(genNum, d)}}
	case 5:
		return &parser.Case{Whens: []parser.When{{Cond: g.expr(genBool, d), Result: s()}}, Else: s()}
	case 6:
		return &parser.Cast{X: g.expr(genNum, d), Type: "string"}
	}
	return g.leaf(genStr)
}

func (g *exprGen) boolean(d int) parser.Expr {
	cmp := []parser.Op{parser.OpEQ, parser.OpNE, parser.OpLT, parser.OpLE, parser.OpGT, parser.OpGE}
	switch g.pick(8) {
	case 0, 1:
		return &parser.Binary{Op: cmp[g.pick(len(cmp))], L: g.expr(genNum, d), R: g.expr(genNum, d)}
	case 2:
		return &parser.Binary{Op: cmp[g.pick(len(cmp))], L: g.expr(genStr, d), R: g.expr(genStr, d)}
	case 3:
		ops := []parser.Op{parser.OpAnd, parser.OpOr}
		return &parser.Binary{Op: ops[g.pick(2)], L: g.expr(genBool, d), R: g.expr(genBool, d)}
	case 4:
		patterns := []string{"a%", "%b%", "%a%a%a%b", "_1%", "%"}
		return &parser.Like{X: g.expr(genStr, d), Pattern: lit(patterns[g.pick(len(patterns))]), Not: g.pick(2) == 0}
	case 5:
		return &parser.IsNull{X: g.expr(genNum, d), Not: g.pick(2) == 0}
	case 6:
		return &parser.Between{X: g.expr(genNum, d), Lo: g.expr(genNum, d), Hi: g.expr(genNum, d)}
	case 7:
		return &parser.In{X: g.expr(genNum, d), List: []parser.Expr{g.expr(genNum, d), lit(int64(10))}}
	}
	return &parser.Unary{Op: parser.OpNot, X: g.expr(genBool, d)}
}

// statements are the DP statements that use e: as a WHERE predicate (a
// non-boolean compared with a constant of its kind), and as the argument
// of COUNT, SUM and MEDIAN.
func (g *exprGen) statements(table string, k genKind, e parser.Expr) []*parser.Select {
	from := &parser.TableName{Name: table}
	count := &parser.Func{Name: "count", Star: true}
	pred := e
	switch k {
	case genNum:
		pred = &parser.Binary{Op: parser.OpGT, L: e, R: lit(int64(0))}
	case genStr:
		pred = &parser.Binary{Op: parser.OpEQ, L: e, R: lit("a")}
	}
	out := []*parser.Select{
		{Items: []parser.SelectItem{{Expr: count}}, From: from, Where: pred},
		{Items: []parser.SelectItem{{Expr: &parser.Func{Name: "count", Args: []parser.Expr{e}}}}, From: from},
	}
	if k == genNum {
		for _, agg := range []string{"sum", "median", "var_pop"} {
			out = append(out, &parser.Select{Items: []parser.SelectItem{{Expr: &parser.Func{Name: agg, Args: []parser.Expr{e}}}}, From: from})
		}
	}
	return out
}

func exprString(e parser.Expr) string { return strings.TrimSpace(exprText(e)) }
