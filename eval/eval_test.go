package eval

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/parser"
)

// Builders for model values; the tests construct expressions directly
// rather than parsing SQL.

func lit(v any) *parser.Literal { return &parser.Literal{Value: v} }

var null = lit(nil)

func col(name string) *parser.ColumnRef { return &parser.ColumnRef{Name: name} }

func bin(op parser.Op, l, r parser.Expr) *parser.Binary { return &parser.Binary{Op: op, L: l, R: r} }

func not(x parser.Expr) *parser.Unary { return &parser.Unary{Op: parser.OpNot, X: x} }

func neg(x parser.Expr) *parser.Unary { return &parser.Unary{Op: parser.OpNeg, X: x} }

func fn(name string, args ...parser.Expr) *parser.Func { return &parser.Func{Name: name, Args: args} }

func countStar() *parser.Func { return &parser.Func{Name: "count", Star: true} }

func exprs(vs ...any) []parser.Expr {
	es := make([]parser.Expr, len(vs))
	for i, v := range vs {
		if e, ok := v.(parser.Expr); ok {
			es[i] = e
		} else {
			es[i] = lit(v)
		}
	}
	return es
}

// testEnv resolves columns, variables and parameters from maps and answers
// the functions in calls.
type testEnv struct {
	cols   map[string]any
	vars   map[string]any
	params []any
	calls  map[string]any
	coll   Collation
}

func (e *testEnv) Column(ref *parser.ColumnRef) (any, error) {
	v, ok := e.cols[ref.Name]
	if !ok {
		return nil, fmt.Errorf("no column %s", ref.Name)
	}
	return v, nil
}

func (e *testEnv) Variable(v *parser.Variable) (any, error) {
	x, ok := e.vars[v.Name]
	if !ok {
		return nil, fmt.Errorf("no variable %s", v.Name)
	}
	return x, nil
}

func (e *testEnv) Param(i int) (any, error) {
	if i >= len(e.params) {
		return nil, fmt.Errorf("no parameter %d", i)
	}
	return e.params[i], nil
}

func (e *testEnv) Call(f *parser.Func) (any, bool, error) {
	if f.Name == "fail" {
		return nil, false, errors.New("engine refused")
	}
	v, ok := e.calls[f.Name]
	return v, ok, nil
}

func (e *testEnv) Collation() Collation { return e.coll }

func env() *testEnv {
	return &testEnv{
		cols:   map[string]any{"n": int64(5), "x": 2.5, "s": "Hello", "nul": nil, "b": []byte("bytes"), "i32": int32(7)},
		vars:   map[string]any{"version_comment": "dpproxy"},
		params: []any{int64(10), "ten", int64(1)},
		calls:  map[string]any{"sum": int64(30), "count": int64(4), "avg": 37.25, "database": "shop"},
	}
}

type evalCase struct {
	name string
	e    parser.Expr
	want any
}

func runCases(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Eval(c.e, env())
			if err != nil {
				t.Fatalf("Eval: %v", err)
			}
			if !sameValue(got, c.want) {
				t.Errorf("got %#v (%T), want %#v (%T)", got, got, c.want, c.want)
			}
		})
	}
}

// sameValue compares exactly, including the Go type; floats within 1e-12.
func sameValue(a, b any) bool {
	af, aok := a.(float64)
	bf, bok := b.(float64)
	if aok && bok {
		return af == bf || math.Abs(af-bf) < 1e-12
	}
	return a == b
}

func TestArithmetic(t *testing.T) {
	runCases(t, []evalCase{
		{"int+int", bin(parser.OpAdd, lit(int64(1)), lit(int64(2))), int64(3)},
		{"int+float", bin(parser.OpAdd, lit(int64(1)), lit(2.5)), 3.5},
		{"string is a number", bin(parser.OpAdd, lit("3"), lit(int64(4))), 7.0},
		{"string prefix", bin(parser.OpMul, lit("2abc"), lit(int64(4))), 8.0},
		{"bool is 1", bin(parser.OpAdd, lit(true), lit(int64(1))), int64(2)},
		{"add overflow to float", bin(parser.OpAdd, lit(int64(math.MaxInt64)), lit(int64(1))), float64(math.MaxInt64) + 1},
		{"sub overflow to float", bin(parser.OpSub, lit(int64(math.MinInt64)), lit(int64(1))), float64(math.MinInt64) - 1},
		{"mul overflow to float", bin(parser.OpMul, lit(int64(math.MaxInt64)), lit(int64(2))), float64(math.MaxInt64) * 2},
		{"mul minint by -1", bin(parser.OpMul, lit(int64(math.MinInt64)), lit(int64(-1))), -float64(math.MinInt64)},
		{"div is float", bin(parser.OpDiv, lit(int64(7)), lit(int64(2))), 3.5},
		{"div by zero", bin(parser.OpDiv, lit(int64(7)), lit(int64(0))), nil},
		{"div by zero float", bin(parser.OpDiv, lit(1.5), lit(0.0)), nil},
		{"intdiv", bin(parser.OpIntDiv, lit(int64(7)), lit(int64(2))), int64(3)},
		{"intdiv truncates", bin(parser.OpIntDiv, lit(int64(-7)), lit(int64(2))), int64(-3)},
		{"intdiv float", bin(parser.OpIntDiv, lit(7.5), lit(int64(2))), int64(3)},
		{"intdiv zero", bin(parser.OpIntDiv, lit(int64(7)), lit(int64(0))), nil},
		{"mod", bin(parser.OpMod, lit(int64(7)), lit(int64(3))), int64(1)},
		{"mod sign of dividend", bin(parser.OpMod, lit(int64(-7)), lit(int64(3))), int64(-1)},
		{"mod float", bin(parser.OpMod, lit(5.5), lit(int64(2))), 1.5},
		{"mod zero", bin(parser.OpMod, lit(int64(5)), lit(int64(0))), nil},
		{"null propagates", bin(parser.OpAdd, null, lit(int64(1))), nil},
		{"neg", neg(lit(int64(5))), int64(-5)},
		{"neg minint", neg(lit(int64(math.MinInt64))), -float64(math.MinInt64)},
		{"neg string", neg(lit("2")), -2.0},
		{"neg null", neg(null), nil},
		{"columns", bin(parser.OpMul, col("n"), col("x")), 12.5},
		{"noisy ratio", bin(parser.OpDiv, fn("sum", col("x")), countStar()), 7.5},
		{"round of noisy avg", fn("round", fn("avg", col("age")), lit(int64(1))), 37.3},
		{"concat operator", bin(parser.OpConcat, lit("a"), lit(int64(1))), "a1"},
		{"concat operator null", bin(parser.OpConcat, lit("a"), null), nil},
		{"bit and", bin(parser.OpBitAnd, lit(int64(6)), lit(int64(3))), int64(2)},
		{"bit or", bin(parser.OpBitOr, lit(int64(6)), lit(int64(3))), int64(7)},
		{"normalized int32 column", bin(parser.OpAdd, col("i32"), lit(int64(1))), int64(8)},
		{"normalized bytes column", col("b"), "bytes"},
	})
}

func TestOverflowError(t *testing.T) {
	_, err := Eval(bin(parser.OpMul, lit(1e300), lit(1e300)), nil)
	if !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("1e300*1e300: got %v, want ErrOutOfRange", err)
	}
	_, err = Eval(fn("exp", lit(int64(1000))), nil)
	if !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("EXP(1000): got %v, want ErrOutOfRange", err)
	}
}

func TestComparisonsAndLogic(t *testing.T) {
	T, F := lit(true), lit(false)
	runCases(t, []evalCase{
		{"int = float", bin(parser.OpEQ, lit(int64(1)), lit(1.0)), true},
		{"string prefix = number", bin(parser.OpEQ, lit("1abc"), lit(int64(1))), true},
		{"case-insensitive =", bin(parser.OpEQ, lit("abc"), lit("ABC")), true},
		{"no pad", bin(parser.OpEQ, lit("a"), lit("a ")), false},
		{"strings <", bin(parser.OpLT, lit("a"), lit("B")), true},
		{"numbers compare numerically", bin(parser.OpGT, lit(int64(2)), lit("10")), false},
		{"strings compare as strings", bin(parser.OpGT, lit("2"), lit("10")), true},
		{"<>", bin(parser.OpNE, lit(int64(1)), lit(int64(2))), true},
		{"<=", bin(parser.OpLE, lit(int64(2)), lit(int64(2))), true},
		{">=", bin(parser.OpGE, lit(int64(1)), lit(int64(2))), false},
		{"null = null", bin(parser.OpEQ, null, null), nil},
		{"null < 1", bin(parser.OpLT, null, lit(int64(1))), nil},
		{"null <=> null", bin(parser.OpNullEQ, null, null), true},
		{"1 <=> null", bin(parser.OpNullEQ, lit(int64(1)), null), false},
		{"1 <=> 1", bin(parser.OpNullEQ, lit(int64(1)), lit("1")), true},
		{"null and false", bin(parser.OpAnd, null, F), false},
		{"false and null", bin(parser.OpAnd, F, null), false},
		{"null and true", bin(parser.OpAnd, null, T), nil},
		{"true and true", bin(parser.OpAnd, T, lit(int64(2))), true},
		{"null or true", bin(parser.OpOr, null, T), true},
		{"null or false", bin(parser.OpOr, null, F), nil},
		{"false or false", bin(parser.OpOr, F, lit(0.0)), false},
		{"string truthiness", bin(parser.OpOr, lit("abc"), lit("0.0")), false},
		{"false and skips error", bin(parser.OpAnd, F, col("missing")), false},
		{"true or skips error", bin(parser.OpOr, T, col("missing")), true},
		{"not null", not(null), nil},
		{"not 0", not(lit(int64(0))), true},
		{"not 'a'", not(lit("a")), true},
		{"xor", bin(parser.OpXor, T, T), false},
		{"xor true", bin(parser.OpXor, T, F), true},
		{"xor null", bin(parser.OpXor, T, null), nil},
		{"between", &parser.Between{X: lit(int64(5)), Lo: lit(int64(1)), Hi: lit(int64(10))}, true},
		{"between strings", &parser.Between{X: lit("b"), Lo: lit("A"), Hi: lit("C")}, true},
		{"between null lo, hi decides", &parser.Between{X: lit(int64(5)), Lo: null, Hi: lit(int64(3))}, false},
		{"between null lo", &parser.Between{X: lit(int64(5)), Lo: null, Hi: lit(int64(10))}, nil},
		{"not between", &parser.Between{X: lit(int64(5)), Lo: lit(int64(6)), Hi: lit(int64(10)), Not: true}, true},
		{"not between null", &parser.Between{X: null, Lo: lit(int64(6)), Hi: lit(int64(10)), Not: true}, nil},
		{"in", &parser.In{X: lit(int64(2)), List: exprs(int64(1), int64(2))}, true},
		{"in coerces", &parser.In{X: lit("2"), List: exprs(int64(1), int64(2))}, true},
		{"in with null miss", &parser.In{X: lit(int64(3)), List: exprs(int64(1), nil)}, nil},
		{"in with null hit", &parser.In{X: lit(int64(1)), List: exprs(nil, int64(1))}, true},
		{"null in", &parser.In{X: null, List: exprs(int64(1))}, nil},
		{"not in", &parser.In{X: lit(int64(3)), List: exprs(int64(1), int64(2)), Not: true}, true},
		{"not in hit", &parser.In{X: lit(int64(1)), List: exprs(int64(1), int64(2)), Not: true}, false},
		{"not in with null", &parser.In{X: lit(int64(3)), List: exprs(int64(1), nil), Not: true}, nil},
		{"is null", &parser.IsNull{X: col("nul")}, true},
		{"is not null", &parser.IsNull{X: col("n"), Not: true}, true},
		{"null is true", &parser.IsBool{X: null, Value: true}, false},
		{"null is not false", &parser.IsBool{X: null, Value: false, Not: true}, true},
		{"0 is false", &parser.IsBool{X: lit(int64(0)), Value: false}, true},
		{"2 is true", &parser.IsBool{X: lit(int64(2)), Value: true}, true},
		{"2 is not true", &parser.IsBool{X: lit(int64(2)), Value: true, Not: true}, false},
	})
}

func TestLikeExpr(t *testing.T) {
	runCases(t, []evalCase{
		{"ci by default", &parser.Like{X: lit("abc"), Pattern: lit("A%")}, true},
		{"not like", &parser.Like{X: lit("abc"), Pattern: lit("b%"), Not: true}, true},
		{"null subject", &parser.Like{X: null, Pattern: lit("%")}, nil},
		{"null pattern", &parser.Like{X: lit("a"), Pattern: null}, nil},
		{"number subject", &parser.Like{X: lit(int64(10)), Pattern: lit("1%")}, true},
		{"default escape", &parser.Like{X: lit("a%"), Pattern: lit(`a\%`)}, true},
		{"default escape literal", &parser.Like{X: lit("ab"), Pattern: lit(`a\%`)}, false},
		{"custom escape", &parser.Like{X: lit("10%"), Pattern: lit("10!%"), Escape: lit("!")}, true},
		{"empty escape", &parser.Like{X: lit(`a\b`), Pattern: lit(`a\_`), Escape: lit("")}, true},
	})
	bin := &testEnv{coll: Binary}
	for _, c := range []struct {
		l    *parser.Like
		want bool
	}{
		{&parser.Like{X: lit("abc"), Pattern: lit("A%")}, false},
		{&parser.Like{X: lit("abc"), Pattern: lit("A%"), CaseInsensitive: true}, true},
	} {
		got, err := Eval(c.l, bin)
		if err != nil || got != c.want {
			t.Errorf("binary collation, ILIKE=%v: got %v, %v; want %v", c.l.CaseInsensitive, got, err, c.want)
		}
	}
	if _, err := Eval(&parser.Like{X: lit("a"), Pattern: lit("a"), Escape: lit("!!")}, nil); err == nil {
		t.Error("two-character ESCAPE: want an error")
	}
}

func TestCaseAndCast(t *testing.T) {
	simple := func(operand parser.Expr, els parser.Expr) *parser.Case {
		return &parser.Case{Operand: operand, Whens: []parser.When{
			{Cond: lit(int64(1)), Result: lit("one")},
			{Cond: lit("two"), Result: lit("TWO")},
		}, Else: els}
	}
	runCases(t, []evalCase{
		{"simple case", simple(lit(int64(1)), lit("other")), "one"},
		{"simple case ci", simple(lit("TWO"), lit("other")), "TWO"},
		{"simple case null operand", simple(null, lit("other")), "other"},
		{"simple case no else", simple(lit(int64(3)), nil), nil},
		{"searched case", &parser.Case{Whens: []parser.When{
			{Cond: null, Result: lit("null")},
			{Cond: bin(parser.OpGT, col("n"), lit(int64(3))), Result: lit("big")},
		}, Else: lit("small")}, "big"},
		{"cast int prefix", &parser.Cast{X: lit("12abc"), Type: "int"}, int64(12)},
		{"cast int from decimal text", &parser.Cast{X: lit("1.9"), Type: "int"}, int64(1)},
		{"cast int rounds floats", &parser.Cast{X: lit(1.5), Type: "int"}, int64(2)},
		{"cast int rounds away", &parser.Cast{X: lit(-1.5), Type: "int"}, int64(-2)},
		{"cast int saturates", &parser.Cast{X: lit("99999999999999999999"), Type: "int"}, int64(math.MaxInt64)},
		{"cast float", &parser.Cast{X: lit(" 2.5e1x"), Type: "float"}, 25.0},
		{"cast decimal keeps int", &parser.Cast{X: lit(int64(3)), Type: "decimal"}, int64(3)},
		{"cast decimal", &parser.Cast{X: lit("3.25"), Type: "decimal"}, 3.25},
		{"cast string", &parser.Cast{X: lit("x"), Type: "string"}, "x"},
		{"cast string of float", &parser.Cast{X: lit(1.5), Type: "string"}, "1.5"},
		{"cast string of bool", &parser.Cast{X: lit(true), Type: "string"}, "1"},
		{"cast date", &parser.Cast{X: lit("2024-01-02 10:11:12"), Type: "date"}, "2024-01-02"},
		{"cast date number", &parser.Cast{X: lit(int64(20240102)), Type: "date"}, "2024-01-02"},
		{"cast datetime", &parser.Cast{X: lit("2024-01-02"), Type: "datetime"}, "2024-01-02 00:00:00"},
		{"cast bad date", &parser.Cast{X: lit("nope"), Type: "date"}, nil},
		{"cast bool word", &parser.Cast{X: lit("yes"), Type: "bool"}, true},
		{"cast bool number", &parser.Cast{X: lit(int64(0)), Type: "bool"}, false},
		{"cast null", &parser.Cast{X: null, Type: "int"}, nil},
	})
	var u *UnsupportedError
	if _, err := Eval(&parser.Cast{X: lit("{}"), Type: "json"}, nil); !errors.As(err, &u) {
		t.Errorf("CAST AS json: got %v, want UnsupportedError", err)
	}
	if _, err := Eval(&parser.Cast{X: lit("maybe"), Type: "bool"}, nil); err == nil {
		t.Error("CAST('maybe' AS bool): want an error")
	}
}

func TestEnvResolution(t *testing.T) {
	runCases(t, []evalCase{
		{"system variable", &parser.Variable{Name: "version_comment", System: true}, "dpproxy"},
		{"param", &parser.Param{Index: 1}, "ten"},
		{"session function", fn("database"), "shop"},
		{"if takes then branch lazily", fn("if", lit(int64(1)), lit("a"), col("missing")), "a"},
		{"if takes else on null", fn("if", null, col("missing"), lit("b")), "b"},
		{"ifnull short-circuits", fn("ifnull", lit("x"), col("missing")), "x"},
		{"coalesce", fn("coalesce", null, col("nul"), lit(int64(3)), col("missing")), int64(3)},
		{"coalesce all null", fn("coalesce", null, null), nil},
	})
}

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		name        string
		e           parser.Expr
		unsupported string // the What of an UnsupportedError, or "" for another error
		contains    string
	}{
		{"unknown function", fn("frobnicate", lit(int64(1))), "function FROBNICATE", "function FROBNICATE is not supported by dpproxy"},
		{"subquery", &parser.Subquery{Select: &parser.Select{}}, "subqueries", ""},
		{"in subquery", &parser.In{X: lit(int64(1)), Sub: &parser.Select{}}, "subqueries", ""},
		{"window", &parser.Func{Name: "sum", Args: exprs(int64(1)), Over: true}, "window function SUM() OVER", ""},
		{"interval", &parser.Interval{Value: lit(int64(1)), Unit: "day"}, "INTERVAL arithmetic", ""},
		{"unanswered aggregate", fn("max", col("n")), "", "aggregate MAX() cannot be computed here"},
		{"env call error", fn("fail"), "", "engine refused"},
		{"unknown column", col("missing"), "", "no column missing"},
		{"arity", fn("replace", lit("a")), "", "incorrect parameter count"},
		{"if arity", fn("if", lit(int64(1))), "", "incorrect parameter count"},
		{"bad regexp", bin(parser.OpRegex, lit("a"), lit("(")), "", "bad regular expression"},
		{"missing operand", bin(parser.OpAdd, nil, lit(int64(1))), "", "missing expression"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Eval(c.e, env())
			if err == nil {
				t.Fatal("want an error")
			}
			var u *UnsupportedError
			if isU := errors.As(err, &u); isU != (c.unsupported != "") || (isU && u.What != c.unsupported) {
				t.Errorf("error %v: want UnsupportedError %q", err, c.unsupported)
			}
			if !strings.Contains(err.Error(), c.contains) {
				t.Errorf("error %q does not contain %q", err, c.contains)
			}
		})
	}
}

func TestNilEnv(t *testing.T) {
	v, err := Eval(bin(parser.OpAdd, lit(int64(1)), lit(int64(1))), nil)
	if err != nil || v != int64(2) {
		t.Fatalf("1+1 with nil Env: %v, %v", v, err)
	}
	if _, err := Eval(col("a"), nil); err == nil {
		t.Fatal("column with nil Env: want an error")
	}
	if _, err := Eval(&parser.Param{Index: 0}, nil); err == nil {
		t.Fatal("param with nil Env: want an error")
	}
}

func TestClock(t *testing.T) {
	before := time.Now().Add(-time.Second)
	for _, c := range []struct{ name, layout string }{
		{"now", dateTimeLayout}, {"current_timestamp", dateTimeLayout}, {"curdate", dateLayout}, {"current_date", dateLayout},
	} {
		v, err := Eval(fn(c.name), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := time.ParseInLocation(c.layout, v.(string), time.Local)
		if err != nil {
			t.Fatalf("%s = %q: %v", c.name, v, err)
		}
		earliest := before.Truncate(time.Second)
		if c.layout == dateLayout {
			earliest = time.Date(before.Year(), before.Month(), before.Day(), 0, 0, 0, 0, time.Local)
		}
		if got.Before(earliest) || got.After(time.Now()) {
			t.Errorf("%s = %q is not now", c.name, v)
		}
	}
	// The Env may pin the clock for a statement.
	e := env()
	e.calls["now"] = "2000-01-01 00:00:00"
	if v, _ := Eval(fn("now"), e); v != "2000-01-01 00:00:00" {
		t.Errorf("NOW() answered by Env: got %v", v)
	}
}
