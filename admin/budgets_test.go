package admin

import (
	"math"
	"testing"
)

func TestFraction(t *testing.T) {
	for _, c := range []struct {
		spent, total float64
		frac         float64
		limited      bool
	}{
		{5, 10, 0.5, true},
		{0, 10, 0, true},
		{12, 10, 1, true}, // overspent shows full, never wider
		{0, 0, 0, true},
		{1, 0, 1, true},
		{-1, 10, 0, true},
		{math.NaN(), 10, 0, true},
		{3, math.Inf(1), 0, false},
		{3, math.NaN(), 0, false},
	} {
		frac, limited := fraction(c.spent, c.total)
		if frac != c.frac || limited != c.limited {
			t.Errorf("fraction(%g, %g) = %g, %v; want %g, %v", c.spent, c.total, frac, limited, c.frac, c.limited)
		}
	}
}

func TestLevelThresholds(t *testing.T) {
	for _, c := range []struct {
		frac float64
		want string
	}{
		{0, levelOK}, {0.75, levelOK}, {0.7501, levelWarn}, {0.9, levelWarn}, {0.9001, levelAlert}, {1, levelAlert},
	} {
		if got := level(c.frac); got != c.want {
			t.Errorf("level(%g) = %s, want %s", c.frac, got, c.want)
		}
	}
}

func TestFormatNumbers(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{
		{0, "0"}, {0.1 + 0.2, "0.3"}, {12, "12"}, {2.5, "2.5"}, {1.23456, "1.235"},
		{12345.678, "12350"}, {0.0005, "0.0005"}, {2e6, "2e+06"}, {math.Inf(1), "∞"},
	} {
		if got := formatEpsilon(c.x); got != c.want {
			t.Errorf("formatEpsilon(%g) = %q, want %q", c.x, got, c.want)
		}
	}
	for _, c := range []struct {
		x    float64
		want string
	}{
		{0, "0"}, {1e-5, "1e-05"}, {1.234e-6, "1.23e-06"}, {math.Inf(1), "∞"},
	} {
		if got := formatDelta(c.x); got != c.want {
			t.Errorf("formatDelta(%g) = %q, want %q", c.x, got, c.want)
		}
	}
}

func TestBudgetViewsGroupUsersUnderRoles(t *testing.T) {
	rows := append(sampleRows(), BudgetRow{Kind: KindUser, Name: "orphan", Role: "nobody", EpsilonTotal: 1})
	var got []string
	var members []bool
	for _, v := range budgetViews(rows) {
		got = append(got, v.Name)
		members = append(members, v.Member)
	}
	want := []string{"analyst", "alice", hostileName, "auditors", "carol", "dave", "orphan"}
	wantMembers := []bool{false, true, true, false, true, true, false} // orphan's role has no row
	for i := range want {
		if i >= len(got) || got[i] != want[i] || members[i] != wantMembers[i] {
			t.Fatalf("order %q members %v, want %q %v", got, members, want, wantMembers)
		}
	}
}
