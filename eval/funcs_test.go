package eval

import (
	"math"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/parser"
)

func TestBuiltins(t *testing.T) {
	i := func(v int64) *parser.Literal { return lit(v) }
	runCases(t, []evalCase{
		{"if true", fn("if", bin(parser.OpGT, col("n"), i(1)), lit("yes"), lit("no")), "yes"},
		{"if false", fn("if", i(0), lit("yes"), lit("no")), "no"},
		{"ifnull", fn("ifnull", null, i(2)), int64(2)},
		{"ifnull keeps value", fn("ifnull", i(0), i(2)), int64(0)},
		{"nullif equal", fn("nullif", lit("a"), lit("A")), nil},
		{"nullif differs", fn("nullif", i(1), i(2)), int64(1)},
		{"nullif null second", fn("nullif", i(1), null), int64(1)},
		{"concat", fn("concat", lit("a"), i(1), lit(1.5)), "a11.5"},
		{"concat null", fn("concat", lit("a"), null), nil},
		{"concat_ws", fn("concat_ws", lit(","), lit("a"), null, lit("b")), "a,b"},
		{"concat_ws null sep", fn("concat_ws", null, lit("a")), nil},
		{"lower", fn("lower", lit("AbC")), "abc"},
		{"lcase", fn("lcase", lit("ÀB")), "àb"},
		{"upper", fn("upper", lit("abc")), "ABC"},
		{"ucase", fn("ucase", col("s")), "HELLO"},
		{"upper null", fn("upper", null), nil},
		{"length bytes", fn("length", lit("né")), int64(3)},
		{"char_length runes", fn("char_length", lit("né")), int64(2)},
		{"length of number", fn("length", i(1234)), int64(4)},
		{"substring", fn("substring", lit("Quadratically"), i(5)), "ratically"},
		{"substring len", fn("substring", lit("Quadratically"), i(5), i(6)), "ratica"},
		{"substring negative", fn("substring", lit("Sakila"), i(-3)), "ila"},
		{"substring negative len", fn("substring", lit("Sakila"), i(-5), i(3)), "aki"},
		{"substring zero", fn("substring", lit("Sakila"), i(0)), ""},
		{"substring past end", fn("substring", lit("abc"), i(4)), ""},
		{"substring too negative", fn("substring", lit("abc"), i(-4)), ""},
		{"substring long len", fn("substring", lit("abc"), i(2), i(math.MaxInt64)), "bc"},
		{"substring zero len", fn("substring", lit("abc"), i(2), i(0)), ""},
		{"substr runes", fn("substr", lit("ñandú"), i(2), i(3)), "and"},
		{"trim", fn("trim", lit("  bar  ")), "bar"},
		{"trim keeps tabs", fn("trim", lit("\tbar ")), "\tbar"},
		{"trim remstr", fn("trim", lit("xxbarxxx"), lit("xx")), "barx"},
		{"trim leading", fn("trim", lit("xxbarxx"), lit("x"), lit("leading")), "barxx"},
		{"trim trailing", fn("trim", lit("xxbarxx"), lit("x"), lit("TRAILING")), "xxbar"},
		{"ltrim", fn("ltrim", lit("  a ")), "a "},
		{"rtrim", fn("rtrim", lit("  a ")), "  a"},
		{"replace", fn("replace", lit("www.mysql.com"), lit("w"), lit("Ww")), "WwWwWw.mysql.com"},
		{"replace empty from", fn("replace", lit("abc"), lit(""), lit("x")), "abc"},
		{"abs int", fn("abs", i(-3)), int64(3)},
		{"abs float", fn("abs", lit(-2.5)), 2.5},
		{"abs string", fn("abs", lit("-4")), 4.0},
		{"round half away", fn("round", lit(2.5)), 3.0},
		{"round negative half away", fn("round", lit(-2.5)), -3.0},
		{"round decimal text", fn("round", lit(2.675), i(2)), 2.68},
		{"round 1.005", fn("round", lit(1.005), i(2)), 1.01},
		{"round down", fn("round", lit(1.234), i(1)), 1.2},
		{"round more digits than present", fn("round", lit(1.5), i(5)), 1.5},
		{"round left of point", fn("round", lit(1234.5), i(-2)), 1200.0},
		{"round to zero", fn("round", lit(0.004), i(2)), 0.0},
		{"round up to first digit", fn("round", lit(0.005), i(2)), 0.01},
		{"round int", fn("round", i(15), i(-1)), int64(20)},
		{"round negative int", fn("round", i(-15), i(-1)), int64(-20)},
		{"round int down", fn("round", i(14), i(-1)), int64(10)},
		{"round int positive d", fn("round", i(14), i(2)), int64(14)},
		{"round int far", fn("round", i(14), i(-30)), int64(0)},
		{"round carries", fn("round", lit(9.99), i(1)), 10.0},
		{"round string", fn("round", lit("2.5")), 3.0},
		{"truncate", fn("truncate", lit(1.999), i(2)), 1.99},
		{"truncate decimal text", fn("truncate", lit(0.29), i(2)), 0.29},
		{"truncate negative", fn("truncate", lit(-1.999), i(1)), -1.9},
		{"truncate left", fn("truncate", lit(122.0), i(-2)), 100.0},
		{"truncate int", fn("truncate", i(-129), i(-1)), int64(-120)},
		{"floor", fn("floor", lit(-1.5)), int64(-2)},
		{"floor int", fn("floor", i(7)), int64(7)},
		{"floor huge", fn("floor", lit(1e30)), 1e30},
		{"ceil", fn("ceil", lit(1.2)), int64(2)},
		{"ceiling", fn("ceiling", lit(-1.2)), int64(-1)},
		{"sqrt", fn("sqrt", i(16)), 4.0},
		{"sqrt negative", fn("sqrt", i(-1)), nil},
		{"pow", fn("pow", i(2), i(10)), 1024.0},
		{"power", fn("power", lit(4.0), lit(0.5)), 2.0},
		{"pow nan", fn("pow", i(-8), lit(1.0/3)), nil},
		{"exp", fn("exp", i(0)), 1.0},
		{"ln", fn("ln", lit(math.E)), 1.0},
		{"ln zero", fn("ln", i(0)), nil},
		{"log", fn("log", lit(math.E)), 1.0},
		{"log base", fn("log", i(2), i(1024)), 10.0},
		{"log base 1", fn("log", i(1), i(100)), nil},
		{"log10", fn("log10", i(1000)), 3.0},
		{"log2", fn("log2", i(8)), 3.0},
		{"log2 negative", fn("log2", i(-8)), nil},
		{"sign", fn("sign", lit(-0.5)), int64(-1)},
		{"sign zero", fn("sign", i(0)), int64(0)},
		{"sign positive", fn("sign", lit("3")), int64(1)},
		{"mod", fn("mod", i(29), i(9)), int64(2)},
		{"mod zero", fn("mod", i(29), i(0)), nil},
		{"greatest", fn("greatest", i(2), i(0), lit(34.0), i(3)), 34.0},
		{"greatest strings", fn("greatest", lit("B"), lit("a"), lit("C")), "C"},
		{"greatest null", fn("greatest", i(2), null), nil},
		{"least", fn("least", i(2), i(0), i(3)), int64(0)},
		{"least mixed", fn("least", lit("10"), i(9)), int64(9)},
		{"regexp", bin(parser.OpRegex, lit("Hello"), lit("^h.l+o$")), true},
		{"regexp miss", bin(parser.OpRegex, lit("Hello"), lit("^x")), false},
		{"regexp null", bin(parser.OpRegex, null, lit("x")), nil},
	})
}

func TestRegexpBinaryCollation(t *testing.T) {
	got, err := Eval(bin(parser.OpRegex, lit("Hello"), lit("^h")), &testEnv{coll: Binary})
	if err != nil || got != false {
		t.Fatalf("'Hello' REGEXP '^h' under Binary: got %v, %v; want false", got, err)
	}
}

func TestIsAggregate(t *testing.T) {
	for name, want := range map[string]bool{"count": true, "sum": true, "group_concat": true, "round": false, "database": false} {
		if IsAggregate(name) != want {
			t.Errorf("IsAggregate(%q) = %v, want %v", name, !want, want)
		}
	}
}

// No string the evaluator builds exceeds maxStringResult, however the
// functions are nested: issue 11 found nested REPLACE building 100 MB in 0.3 s
// (10 levels would be 10 GB and kill the process).
func TestStringResultsAreCapped(t *testing.T) {
	x := parser.Expr(lit("aaaaaaaaaa"))
	for i := 0; i < 10; i++ {
		x = &parser.Func{Name: "replace", Args: []parser.Expr{x, lit("a"), lit("aaaaaaaaaa")}}
	}
	if v, err := Eval(x, noEnv{}); err != nil || v != nil {
		t.Errorf("10 nested REPLACEs = %.20v, %v; want NULL", v, err)
	}
	big := lit(strings.Repeat("x", maxStringResult/2+1))
	for _, e := range []parser.Expr{
		&parser.Func{Name: "concat", Args: []parser.Expr{big, big}},
		&parser.Func{Name: "concat_ws", Args: []parser.Expr{lit(","), big, big}},
		&parser.Binary{Op: parser.OpConcat, L: big, R: big},
	} {
		if v, err := Eval(e, noEnv{}); err != nil || v != nil {
			t.Errorf("%T over the cap = %.20v, %v; want NULL", e, v, err)
		}
	}
}
