package eval

import (
	"testing"

	"github.com/dpproxy/dpproxy/parser"
)

func TestStringSearchFunctions(t *testing.T) {
	lit := func(v any) parser.Expr { return &parser.Literal{Value: v} }
	call := func(name string, args ...any) parser.Expr {
		f := &parser.Func{Name: name}
		for _, a := range args {
			f.Args = append(f.Args, lit(a))
		}
		return f
	}
	cases := []struct {
		e    parser.Expr
		want any
	}{
		{call("locate", "(", "varchar(64)"), int64(8)},
		{call("locate", "bar", "foobarbar", int64(5)), int64(7)},
		{call("locate", "x", "abc"), int64(0)},
		{call("instr", "foobar", "BAR"), int64(4)},
		{call("left", "héllo", int64(2)), "hé"},
		{call("right", "hello", int64(3)), "llo"},
		{call("lpad", "7", int64(3), "0"), "007"},
		{call("rpad", "ab", int64(5), "xy"), "abxyx"},
		{call("lpad", "hello", int64(2), "x"), "he"},
		{call("repeat", "ab", int64(3)), "ababab"},
		{call("reverse", "abç"), "çba"},
		{call("locate", nil, "abc"), nil},
	}
	for _, tc := range cases {
		got, err := Eval(tc.e, nil)
		if err != nil || got != tc.want {
			t.Errorf("%v: got %v (%v), want %v", tc.e.(*parser.Func).Name, got, err, tc.want)
		}
	}
}
