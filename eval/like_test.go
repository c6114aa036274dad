package eval

import "testing"

func TestLike(t *testing.T) {
	for _, c := range []struct {
		s, p string
		esc  rune
		ci   bool
		want bool
	}{
		{"", "", '\\', false, true},
		{"", "%", '\\', false, true},
		{"", "_", '\\', false, false},
		{"a", "", '\\', false, false},
		{"abc", "abc", '\\', false, true},
		{"abc", "ABC", '\\', false, false},
		{"abc", "ABC", '\\', true, true},
		{"abc", "ab", '\\', false, false},
		{"ab", "abc", '\\', false, false},
		{"abc", "_b_", '\\', false, true},
		{"ab", "_b_", '\\', false, false},
		{"abc", "a%", '\\', false, true},
		{"abc", "%c", '\\', false, true},
		{"abc", "%b%", '\\', false, true},
		{"abc", "%%%", '\\', false, true},
		{"abc", "a%%c", '\\', false, true},
		{"aaab", "%ab", '\\', false, true},
		{"aaabx", "%ab", '\\', false, false},
		{"mississippi", "%iss%ppi", '\\', false, true},
		{"mississippi", "m%iss%iss%", '\\', false, true},
		{"mississippi", "m%iss%iss%iss%", '\\', false, false},
		{"abcabd", "%ab_", '\\', false, true},
		{"10%", `10\%`, '\\', false, true},
		{"100", `10\%`, '\\', false, false},
		{"a_b", `a\_b`, '\\', false, true},
		{"axb", `a\_b`, '\\', false, false},
		{`a\`, `a\`, '\\', false, true},    // trailing escape is itself
		{`a\b`, `a\\b`, '\\', false, true}, // escaped escape
		{"10%", "10!%", '!', false, true},
		{`a\b`, `a\_`, 0, false, true}, // no escape: backslash is literal
		{"ñandú", "_and_", '\\', false, true},
		{"ÑANDÚ", "ñandú", '\\', true, true},
		{"TABLE_NAME", "table%", '\\', true, true},
		{"line\nbreak", "line_break", '\\', false, true},
	} {
		if got := Like(c.s, c.p, c.esc, c.ci); got != c.want {
			t.Errorf("Like(%q, %q, %q, ci=%v) = %v, want %v", c.s, c.p, c.esc, c.ci, got, c.want)
		}
	}
}
