package ledger

import (
	"context"
	"errors"
	"math"
	"testing"
)

// sameSums compares the running sums of got and want (ε, δ, ρ, charges),
// to a relative 1e-12.
func sameSums(t *testing.T, what string, got, want Spent) {
	t.Helper()
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }
	if got.Charges != want.Charges || !near(got.Epsilon, want.Epsilon) || !near(got.Delta, want.Delta) || !near(got.Rho, want.Rho) {
		t.Errorf("%s spent ε=%g δ=%g ρ=%g over %d charges, want ε=%g δ=%g ρ=%g over %d",
			what, got.Epsilon, got.Delta, got.Rho, got.Charges, want.Epsilon, want.Delta, want.Rho, want.Charges)
	}
}

// sequentialAdmits is how many copies of c the accountant admits, one after
// the other, into an empty budget total.
func sequentialAdmits(t testing.TB, c Charge, total Budget) int {
	t.Helper()
	var s Spent
	for n := 0; n < 1_000_000; n++ {
		next, _, ok := admit(s, costOf(c), total)
		if !ok {
			return n
		}
		s = next
	}
	t.Fatalf("the accountant never refuses %+v against %+v", c, total)
	return 0
}

// withinBudget fails if s, seen against total, is over it.
func withinBudget(t *testing.T, what string, s Spent, total Budget) {
	t.Helper()
	a := s.Account(total)
	if a.Effective.Epsilon > total.Epsilon*(1+relTol) || a.Effective.Delta > (total.Delta-a.Reserved)*(1+relTol) {
		t.Errorf("%s is over its budget: %s", what, a)
	}
}

// ε(ρ, δ) = ρ + 2√(ρ ln(1/δ)) must bound the privacy loss of ρ-zCDP with
// probability 1−δ. The Gaussian mechanism is exactly ρ-zCDP and its privacy
// loss is distributed N(ρ, 2ρ) (Bun & Steinke 2016, Proposition 1.6 and its
// proof), so P[L > ε] = ½·erfc((ε−ρ)/(2√ρ)) must be ≤ δ everywhere.
func TestZCDPEpsilonBoundsTheGaussianLoss(t *testing.T) {
	for _, rho := range []float64{1e-4, 1e-2, 0.1, 0.5, 1, 5, 50} {
		for _, delta := range []float64{1e-10, 1e-6, 1e-5, 1e-3, 0.1} {
			eps := zcdpEpsilon(rho, delta)
			tail := 0.5 * math.Erfc((eps-rho)/(2*math.Sqrt(rho)))
			if tail > delta {
				t.Errorf("ρ=%g δ=%g: ε=%g but the Gaussian loss exceeds it with probability %g", rho, delta, eps, tail)
			}
		}
	}
	if got, want := zcdpEpsilon(0.5, 1e-5), 0.5+2*math.Sqrt(0.5*math.Log(1e5)); got != want {
		t.Errorf("ε(0.5, 1e-5) = %v, want %v", got, want)
	}
	if zcdpEpsilon(0, 0) != 0 || !math.IsInf(zcdpEpsilon(0.1, 0), 1) {
		t.Error("ε(0, ·) must be 0 and ε(ρ>0, 0) infinite")
	}
}

func TestAccountantPicksTheTighterView(t *testing.T) {
	total := Budget{Epsilon: 10, Delta: 1e-5}
	for _, tc := range []struct {
		name string
		c    Charge
		want func(n int) bool
		why  string
	}{
		{"few large Laplace", Charge{User: "u", Epsilon: 4}, func(n int) bool { return n == 2 },
			"basic composition: 2 of ε=4 in 10 (zCDP: ρ=8 per charge is far over)"},
		{"many small Laplace", Charge{User: "u", Epsilon: 0.1}, func(n int) bool { return n > 200 },
			"zCDP: Σεᵢ²/2 grows slower than Σεᵢ"},
		// A Gaussian at (ε=1, δ=1e-6) with Δ₂=1 has σ ≈ 4.4 (analytic
		// calibration), ρ = 1/(2σ²) ≈ 0.026.
		{"Gaussian with δ in ρ", Charge{User: "u", Epsilon: 1, Delta: 1e-6, Rho: 0.026, DeltaInRho: 1e-6},
			func(n int) bool { return n >= 40 }, "zCDP: each costs ρ only, after basic stops at 9 on δ"},
		{"Gaussian, δ not marked as in ρ", Charge{User: "u", Epsilon: 1, Delta: 1e-6, Rho: 0.026},
			func(n int) bool { return n == 9 }, "its δ stays a δ in the zCDP view too: 9e-6 bookable"},
	} {
		n := sequentialAdmits(t, tc.c, total)
		if !tc.want(n) {
			t.Errorf("%s: %d admitted; expected by %s", tc.name, n, tc.why)
		}
		// Whatever was admitted is within the budget.
		var s Spent
		for range n {
			s, _, _ = admit(s, costOf(tc.c), total)
		}
		withinBudget(t, tc.name, s, total)
	}
}

func TestAccountantModeIsSticky(t *testing.T) {
	total := Budget{Epsilon: 10, Delta: 1e-5}
	small := costOf(Charge{User: "u", Epsilon: 0.1})
	var s Spent
	for range 100 { // exactly the basic budget
		s, _, _ = admit(s, small, total)
	}
	if s.ZCDP {
		t.Fatal("the budget left basic mode before basic composition ran out")
	}
	s, _, ok := admit(s, small, total)
	if !ok || !s.ZCDP {
		t.Fatalf("charge 101 was not admitted in zCDP mode: ok=%v %+v", ok, s)
	}
	// A refund brings Σε back under 10, but the budget stays in zCDP mode:
	// a run must end in the mode whose events it booked.
	s = s.release(small, 0)
	s = s.release(small, 0)
	if !s.ZCDP {
		t.Error("a refund took the budget back to basic mode")
	}
	// In zCDP mode a charge that basic composition alone would take (Σε = 2
	// of 10) is refused when ε(Σρ) would pass 10: ρ = 1.3 + 0.5 gives 11.8.
	z := Spent{Epsilon: 1, Rho: 1.3, Charges: 1, ZCDP: true}
	if _, _, ok := admit(z, costOf(Charge{User: "u", Epsilon: 1}), total); ok {
		t.Error("a charge was admitted by basic composition in zCDP mode")
	}
	z.ZCDP = false
	if _, _, ok := admit(z, costOf(Charge{User: "u", Epsilon: 1}), total); !ok {
		t.Error("the same charge was refused in basic mode")
	}
	// Once nothing remains, the sequence is empty and basic mode returns.
	e := Spent{Charges: 1, Epsilon: 1, ZCDP: true}.release(costOf(Charge{Epsilon: 1}), 0)
	if e.ZCDP || e.Charges != 0 {
		t.Errorf("the last refund left %+v", e)
	}
}

func TestAccountantReservesDeltaForTheConversion(t *testing.T) {
	total := Budget{Epsilon: 10, Delta: 1e-5}
	if _, _, ok := admit(Spent{}, costOf(Charge{User: "u", Epsilon: 1, Delta: 9.5e-6}), total); ok {
		t.Error("a charge of δ=9.5e-6 was admitted although 1e-6 of 1e-5 is reserved")
	}
	s, booked, ok := admit(Spent{}, costOf(Charge{User: "u", Epsilon: 1, Delta: 9e-6}), total)
	if !ok || booked != 9e-6 || s.DeltaBooked != 9e-6 {
		t.Fatalf("a charge of δ=9e-6 was not booked: ok=%v booked=%g %+v", ok, booked, s)
	}
	if left := s.Account(total).Left(); left.Delta > 1e-18 || math.Abs(left.Epsilon-9) > 1e-12 {
		t.Errorf("left %+v, want ε=9 δ=0", left)
	}
	// A Gaussian whose δ is in ρ still fits in zCDP mode: it books no δ.
	g := Charge{User: "u", Epsilon: 1, Delta: 1e-6, Rho: 0.026, DeltaInRho: 1e-6}
	s2, booked, ok := admit(s, costOf(g), total)
	if !ok || booked != 0 || !s2.ZCDP {
		t.Errorf("a Gaussian with its δ in ρ was refused or booked δ: ok=%v booked=%g", ok, booked)
	}
}

func TestPerQueryCap(t *testing.T) {
	l := openTemp(t)
	ctx := context.Background()
	lim := Limits{User: Budget{Epsilon: 10, Delta: 1e-5}, MaxPerQuery: Budget{Epsilon: 1}}
	_, err := l.Charge(ctx, Charge{User: "alice", Role: "analyst", Epsilon: 1.5}, lim)
	var be *BudgetError
	if !errors.As(err, &be) || !be.PerQuery {
		t.Fatalf("a charge over the per-query cap returned %v", err)
	}
	if _, err := l.Charge(ctx, Charge{User: "alice", Role: "analyst", Epsilon: 1}, lim); err != nil {
		t.Errorf("a charge at the cap was refused: %v", err)
	}
}
