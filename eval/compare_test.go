package eval

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestCompareOrder(t *testing.T) {
	// Each value sorts strictly before the next.
	ordered := []any{nil, int64(-5), -1.5, false, int64(1), 2.5, int64(3), int64(10), "1", "10", "9", "a", "B", "b2", "C"}
	for i := range ordered {
		for j := range ordered {
			want := cmpOrdered(int64(i), int64(j))
			if got := Compare(ordered[i], ordered[j]); got != want {
				t.Errorf("Compare(%#v, %#v) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
	shuffled := slices.Clone(ordered)
	slices.Reverse(shuffled)
	slices.SortStableFunc(shuffled, Compare)
	if !slices.Equal(shuffled, ordered) {
		t.Errorf("sorted: %v, want %v", shuffled, ordered)
	}
}

func TestUnifyKinds(t *testing.T) {
	mixed := unifyKinds([]any{int64(9), nil, "10", 2.5})
	if want := []any{"9", nil, "10", "2.5"}; !slices.Equal(mixed, want) {
		t.Errorf("mixed kinds: %#v, want %#v", mixed, want)
	}
	nums := []any{int64(9), nil, 2.5, true}
	if got := unifyKinds(nums); !slices.Equal(got, nums) {
		t.Errorf("numbers only must stay: %#v", got)
	}
}

func TestCompareCollations(t *testing.T) {
	if Compare("abc", "ABD") >= 0 {
		t.Error("case-insensitive: 'abc' should sort before 'ABD'")
	}
	if Compare("abc", "ABC") != 0 || Binary.Compare("abc", "ABC") == 0 {
		t.Error("'abc' and 'ABC' tie under CaseInsensitive only")
	}
	if Binary.Compare("abc", "ABD") <= 0 {
		t.Error("binary: 'abc' should sort after 'ABD'")
	}
	if c, null := CaseInsensitive.cmp("Straße", "STRASSE"); null || c == 0 {
		t.Error("simple folding does not equate ß and SS")
	}
	if c, _ := CaseInsensitive.cmp("ÉTÉ", "été"); c != 0 {
		t.Error("'ÉTÉ' = 'été' under CaseInsensitive")
	}
	if c, _ := Binary.cmp("a", "A"); c == 0 {
		t.Error("'a' <> 'A' under Binary")
	}
	if CaseInsensitive.key("Abc") != CaseInsensitive.key("aBC") || Binary.key("Abc") == Binary.key("aBC") {
		t.Error("keys must follow the collation")
	}
	if CaseInsensitive.key(int64(2)) != CaseInsensitive.key(2.0) || CaseInsensitive.key(int64(2)) == CaseInsensitive.key("2") {
		t.Error("2 and 2.0 share a key; 2 and '2' do not")
	}
}

func TestConversions(t *testing.T) {
	for _, c := range []struct {
		v      any
		f      float64
		fok    bool
		i      int64
		iok    bool
		s      string
		truthy bool
	}{
		{nil, 0, false, 0, false, "", false},
		{int64(7), 7, true, 7, true, "7", true},
		{int32(-7), -7, true, -7, true, "-7", true},
		{uint64(math.MaxUint64), math.MaxUint64, true, math.MaxInt64, true, "1.8446744073709552e19", true},
		{2.5, 2.5, true, 3, true, "2.5", true},
		{-2.5, -2.5, true, -3, true, "-2.5", true},
		{100.0, 100, true, 100, true, "100", true},
		{1e20, 1e20, true, math.MaxInt64, true, "1e20", true},
		{1.5e-7, 1.5e-7, true, 0, true, "1.5e-07", true},
		{true, 1, true, 1, true, "1", true},
		{false, 0, true, 0, true, "0", false},
		{"12abc", 12, true, 12, true, "12abc", true},
		{"  -3.5e2x", -350, true, -3, true, "  -3.5e2x", true},
		{"1e", 1, true, 1, true, "1e", true},
		{".5", 0.5, true, 0, true, ".5", true},
		{"abc", 0, true, 0, true, "abc", false},
		{"0.0", 0, true, 0, true, "0.0", false},
		{"-", 0, true, 0, true, "-", false},
		{[]byte("42"), 42, true, 42, true, "42", true},
		{time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), 2024, true, 2024, true, "2024-01-02 03:04:05", true},
	} {
		if f, ok := ToFloat(c.v); f != c.f || ok != c.fok {
			t.Errorf("ToFloat(%#v) = %v, %v; want %v, %v", c.v, f, ok, c.f, c.fok)
		}
		if i, ok := ToInt(c.v); i != c.i || ok != c.iok {
			t.Errorf("ToInt(%#v) = %v, %v; want %v, %v", c.v, i, ok, c.i, c.iok)
		}
		if s := ToString(c.v); s != c.s {
			t.Errorf("ToString(%#v) = %q, want %q", c.v, s, c.s)
		}
		truth, isNull := Truthy(c.v)
		if truth != c.truthy || isNull != (c.v == nil) {
			t.Errorf("Truthy(%#v) = %v, %v; want %v, %v", c.v, truth, isNull, c.truthy, c.v == nil)
		}
	}
	if _, ok := ToInt(math.NaN()); ok {
		t.Error("ToInt(NaN) should not be ok")
	}
}

func TestNormalize(t *testing.T) {
	for _, c := range []struct{ in, want any }{
		{int(1), int64(1)}, {int8(-2), int64(-2)}, {int16(3), int64(3)}, {int32(4), int64(4)},
		{uint(5), int64(5)}, {uint8(6), int64(6)}, {uint16(7), int64(7)}, {uint32(8), int64(8)},
		{uint64(9), int64(9)}, {float32(0.5), 0.5}, {[]byte(nil), nil}, {[]byte("x"), "x"},
	} {
		if got := normalize(c.in); got != c.want {
			t.Errorf("normalize(%#v) = %#v, want %#v", c.in, got, c.want)
		}
	}
}
