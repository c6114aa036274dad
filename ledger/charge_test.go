package ledger

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// openTemp opens a fresh on-disk ledger (with synchronous writes, as in
// production) that is closed when the test ends.
func openTemp(t testing.TB) *Ledger {
	t.Helper()
	l, err := Open(filepath.Join(t.TempDir(), "ledger"), Options{Logger: quietLogger()})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return l
}

// quietLogger keeps test output to Badger's warnings and errors.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func mustSpent(t *testing.T, l *Ledger, user string) Spent {
	t.Helper()
	s, err := l.UserSpent(context.Background(), user)
	if err != nil {
		t.Fatalf("UserSpent(%s): %v", user, err)
	}
	return s
}

func mustEntries(t *testing.T, l *Ledger, user string, limit int) []Entry {
	t.Helper()
	es, err := l.Entries(context.Background(), user, limit)
	if err != nil {
		t.Fatalf("Entries(%q, %d): %v", user, limit, err)
	}
	return es
}

func TestChargeRefundSpentEntries(t *testing.T) {
	ctx := context.Background()
	l := openTemp(t)
	lim := Limits{User: Budget{Epsilon: 10, Delta: 1e-5}}

	c1 := Charge{User: "alice", Role: "analyst", Statement: "SELECT COUNT(*) FROM t", Fingerprint: "f1",
		Mechanism: "laplace", Epsilon: 1}
	c2 := Charge{User: "alice", Role: "analyst", Statement: "SELECT SUM(x) FROM t", Fingerprint: "f2",
		Mechanism: "gaussian", Epsilon: 0.5, Delta: 1e-6, Rho: 0.01}
	c3 := Charge{User: "bob", Role: "analyst", Mechanism: "laplace", Epsilon: 2}
	r1, err := l.Charge(ctx, c1, lim)
	if err != nil {
		t.Fatalf("Charge c1: %v", err)
	}
	r2, err := l.Charge(ctx, c2, lim)
	if err != nil {
		t.Fatalf("Charge c2: %v", err)
	}
	if _, err := l.Charge(ctx, c3, lim); err != nil {
		t.Fatalf("Charge c3: %v", err)
	}
	if r1.ID == r2.ID || r2.ID <= r1.ID || r2.Time.Before(r1.Time) {
		t.Errorf("receipts not time-ordered: %+v then %+v", r1, r2)
	}

	// c1 states no ρ: the ledger takes ε²/2 = 0.5 (pure ε-DP).
	sameSums(t, "alice", mustSpent(t, l, "alice"), Spent{Epsilon: 1.5, Delta: 1e-6, Rho: 0.51, Charges: 2})
	if got := mustSpent(t, l, "carol"); got != (Spent{}) {
		t.Errorf("carol, who never queried, spent %+v", got)
	}
	if got, _ := l.RoleSpent(ctx, "analyst"); got != (Spent{}) {
		t.Errorf("charges without a pool limit were counted in the pool: %+v", got)
	}

	if err := l.Refund(ctx, r1.ID); err != nil {
		t.Fatalf("Refund: %v", err)
	}
	sameSums(t, "alice after the refund", mustSpent(t, l, "alice"), Spent{Epsilon: 0.5, Delta: 1e-6, Rho: 0.01, Charges: 1})

	// Alice's trail newest first: the refund, c2, c1 (now marked refunded).
	es := mustEntries(t, l, "alice", 0)
	if len(es) != 3 {
		t.Fatalf("alice has %d entries, want 3: %+v", len(es), es)
	}
	if es[0].Kind != KindRefund || es[0].Ref != r1.ID || es[0].Outcome != OutcomeRefunded || es[0].Epsilon != 1 {
		t.Errorf("newest entry is not the refund of %s: %+v", r1.ID, es[0])
	}
	if es[1].ID != r2.ID || es[1].Kind != KindCharge || es[1].Outcome != OutcomeCharged || es[1].Charge != c2 {
		t.Errorf("second entry is not charge c2: %+v", es[1])
	}
	if es[2].ID != r1.ID || es[2].Outcome != OutcomeRefunded || es[2].Ref != es[0].ID || es[2].Charge != c1 {
		t.Errorf("oldest entry is not c1 marked refunded by %s: %+v", es[0].ID, es[2])
	}
	if !es[2].Time.Equal(r1.Time) {
		t.Errorf("entry time %v differs from receipt time %v", es[2].Time, r1.Time)
	}

	all := mustEntries(t, l, "", 0)
	if len(all) != 4 {
		t.Fatalf("trail has %d entries, want 4", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].ID <= all[i].ID {
			t.Errorf("trail not newest first at %d: %s then %s", i, all[i-1].ID, all[i].ID)
		}
	}
	if got := mustEntries(t, l, "", 2); len(got) != 2 || got[0].ID != all[0].ID || got[1].ID != all[1].ID {
		t.Errorf("limit 2 returned %+v, want the two newest", got)
	}
	if got := mustEntries(t, l, "bob", 0); len(got) != 1 || got[0].User != "bob" {
		t.Errorf("bob's trail: %+v", got)
	}
}

func TestOverBudgetRefusedAndNothingWritten(t *testing.T) {
	ctx := context.Background()
	l := openTemp(t)
	lim := Limits{User: Budget{Epsilon: 10, Delta: 1e-5}}
	if _, err := l.Charge(ctx, Charge{User: "alice", Epsilon: 9.5}, lim); err != nil {
		t.Fatalf("Charge: %v", err)
	}
	before, beforeTrail := mustSpent(t, l, "alice"), mustEntries(t, l, "", 0)

	_, err := l.Charge(ctx, Charge{User: "alice", Epsilon: 1, Delta: 1e-6}, lim)
	var be *BudgetError
	if !errors.As(err, &be) || !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("over-budget charge returned %v, want a *BudgetError", err)
	}
	const msg = "privacy budget exceeded for user alice: query needs ε=1 δ=1e-06, " +
		"spent ε=9.5 of 10 (0.5 left; basic), δ=0 of 1e-05 (9e-06 left, 1e-06 reserved)"
	if err.Error() != msg {
		t.Errorf("message\n %s\nwant\n %s", err, msg)
	}
	if be.Who != "alice" || be.Pool || be.Asked != (Budget{1, 1e-6}) || be.Spent.Basic != (Budget{9.5, 0}) {
		t.Errorf("BudgetError fields: %+v", be)
	}

	// δ alone can exhaust the budget too.
	if _, err := l.Charge(ctx, Charge{User: "alice", Epsilon: 0.1, Delta: 2e-5}, lim); !errors.As(err, &be) {
		t.Errorf("charge over the δ budget returned %v, want a *BudgetError", err)
	}

	if got := mustSpent(t, l, "alice"); got != before {
		t.Errorf("refused charges changed the totals: %+v, was %+v", got, before)
	}
	if got := mustEntries(t, l, "", 0); len(got) != len(beforeTrail) {
		t.Errorf("refused charges wrote %d entries", len(got)-len(beforeTrail))
	}
	// What is left can still be spent, exactly.
	if _, err := l.Charge(ctx, Charge{User: "alice", Epsilon: 0.5}, lim); err != nil {
		t.Errorf("charge of exactly the rest refused: %v", err)
	}
}

// A budget of exactly three charges of 0.1 must allow three, although
// 0.1+0.1+0.1 > 0.3 in float64, and refuse the fourth.
func TestFloatSumsExhaustExactly(t *testing.T) {
	ctx := context.Background()
	l := openTemp(t)
	lim := Limits{User: Budget{Epsilon: 0.3, Delta: 0}}
	for i := range 3 {
		if _, err := l.Charge(ctx, Charge{User: "u", Epsilon: 0.1}, lim); err != nil {
			t.Fatalf("charge %d of 3 refused: %v", i+1, err)
		}
	}
	if _, err := l.Charge(ctx, Charge{User: "u", Epsilon: 0.1}, lim); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("fourth charge returned %v, want budget exceeded", err)
	}
	if _, err := l.Charge(ctx, Charge{User: "u", Epsilon: 1e-9}, lim); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("a tiny charge past the budget returned %v, want budget exceeded", err)
	}
}

func TestPoolLimitAcrossUsers(t *testing.T) {
	ctx := context.Background()
	l := openTemp(t)
	pool := Budget{Epsilon: 3, Delta: 1e-5}
	lim := Limits{User: Budget{Epsilon: 2, Delta: 1e-5}, Pool: &pool}

	if _, err := l.Charge(ctx, Charge{User: "alice", Role: "analyst", Epsilon: 2}, lim); err != nil {
		t.Fatal(err)
	}
	// Alice's own allowance is gone, whatever the pool says.
	_, err := l.Charge(ctx, Charge{User: "alice", Role: "analyst", Epsilon: 0.5}, lim)
	var be *BudgetError
	if !errors.As(err, &be) || be.Pool || be.Who != "alice" {
		t.Fatalf("alice over her own allowance: %v", err)
	}
	r, err := l.Charge(ctx, Charge{User: "bob", Role: "analyst", Epsilon: 1}, lim)
	if err != nil {
		t.Fatal(err)
	}
	// Carol has her whole allowance but the pool has nothing left.
	_, err = l.Charge(ctx, Charge{User: "carol", Role: "analyst", Epsilon: 0.5}, lim)
	if !errors.As(err, &be) || !be.Pool || be.Who != "analyst" || be.Spent.Basic.Epsilon != 3 {
		t.Fatalf("carol over the pool: %v", err)
	}
	if !strings.Contains(err.Error(), "shared pool of role analyst") {
		t.Errorf("pool error does not name the pool: %v", err)
	}
	if got := mustSpent(t, l, "carol"); got != (Spent{}) {
		t.Errorf("refused pool charge was written to carol's totals: %+v", got)
	}
	// Another role's pool is separate.
	if _, err := l.Charge(ctx, Charge{User: "carol", Role: "auditor", Epsilon: 0.5}, lim); err != nil {
		t.Errorf("a charge against another role's pool was refused: %v", err)
	}

	spent, err := l.RoleSpent(ctx, "analyst")
	if err != nil {
		t.Fatal(err)
	}
	sameSums(t, "pool", spent, Spent{Epsilon: 3, Rho: 2.5, Charges: 2})
	// A refund gives the pool back its share.
	if err := l.Refund(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	spent, _ = l.RoleSpent(ctx, "analyst")
	sameSums(t, "pool after the refund", spent, Spent{Epsilon: 2, Rho: 2, Charges: 1})
	if _, err := l.Charge(ctx, Charge{User: "carol", Role: "analyst", Epsilon: 0.5}, lim); err != nil {
		t.Errorf("carol refused after the refund freed the pool: %v", err)
	}
}

func TestRefundTwiceAndUnknown(t *testing.T) {
	ctx := context.Background()
	l := openTemp(t)
	lim := Limits{User: Budget{Epsilon: 10}}
	if _, err := l.Charge(ctx, Charge{User: "alice", Epsilon: 1}, lim); err != nil {
		t.Fatal(err)
	}
	r, err := l.Charge(ctx, Charge{User: "alice", Epsilon: 2}, lim)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Refund(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if err := l.Refund(ctx, r.ID); !errors.Is(err, ErrAlreadyRefunded) {
		t.Errorf("second refund returned %v, want ErrAlreadyRefunded", err)
	}
	sameSums(t, "alice after refunding twice", mustSpent(t, l, "alice"), Spent{Epsilon: 1, Rho: 0.5, Charges: 1})
	if n := len(mustEntries(t, l, "alice", 0)); n != 3 {
		t.Errorf("trail has %d entries, want 2 charges + 1 refund", n)
	}

	refundID := mustEntries(t, l, "alice", 1)[0].ID
	if err := l.Refund(ctx, refundID); err == nil || errors.Is(err, ErrAlreadyRefunded) {
		t.Errorf("refunding a refund entry returned %v, want a not-a-charge error", err)
	}
	var missing entryID
	missing[0] = 1
	if err := l.Refund(ctx, missing.String()); !errors.Is(err, ErrNoSuchEntry) {
		t.Errorf("refund of an unknown ID returned %v, want ErrNoSuchEntry", err)
	}
	if err := l.Refund(ctx, "not-an-id"); err == nil {
		t.Error("refund of a malformed ID succeeded")
	}
}

func TestChargeRejectsInvalid(t *testing.T) {
	ctx := context.Background()
	l := openTemp(t)
	lim := Limits{User: Budget{Epsilon: 10, Delta: 1e-5}}
	for name, tc := range map[string]struct {
		c   Charge
		lim Limits
	}{
		"no user":           {Charge{Epsilon: 1}, lim},
		"negative ε":        {Charge{User: "u", Epsilon: -1}, lim},
		"NaN ε":             {Charge{User: "u", Epsilon: math.NaN()}, lim},
		"infinite δ":        {Charge{User: "u", Delta: math.Inf(1)}, lim},
		"δ over 1":          {Charge{User: "u", Delta: 2}, Limits{User: Budget{10, 10}}},
		"negative ρ":        {Charge{User: "u", Rho: -0.1}, lim},
		"NaN budget":        {Charge{User: "u", Epsilon: 1}, Limits{User: Budget{math.NaN(), 0}}},
		"pool without role": {Charge{User: "u", Epsilon: 1}, Limits{User: lim.User, Pool: &Budget{1, 0}}},
	} {
		if _, err := l.Charge(ctx, tc.c, tc.lim); err == nil || errors.Is(err, ErrBudgetExceeded) {
			t.Errorf("%s: Charge returned %v, want a validation error", name, err)
		}
	}
	if n := len(mustEntries(t, l, "", 0)); n != 0 {
		t.Errorf("invalid charges wrote %d entries", n)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.Charge(cancelled, Charge{User: "u", Epsilon: 1}, lim); !errors.Is(err, context.Canceled) {
		t.Errorf("Charge with a cancelled context returned %v", err)
	}
	if got := mustSpent(t, l, "u"); got != (Spent{}) {
		t.Errorf("a cancelled charge was recorded: %+v", got)
	}
}

// hammer runs 64 goroutines, each trying `each` charges built by mk, and
// returns how many succeeded. Every failure must be a *BudgetError.
func hammer(t *testing.T, l *Ledger, each int, lim Limits, mk func(g int) Charge) int {
	t.Helper()
	var ok atomic.Int64
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			for range each {
				_, err := l.Charge(context.Background(), mk(g), lim)
				var be *BudgetError
				switch {
				case err == nil:
					ok.Add(1)
				case !errors.As(err, &be):
					t.Errorf("goroutine %d: Charge failed with %v, not a budget error", g, err)
				}
			}
		})
	}
	wg.Wait()
	return int(ok.Load())
}

func TestConcurrentChargesOneUser(t *testing.T) {
	const eps = 0.1
	l := openTemp(t)
	// Small Laplace charges: basic composition allows 100, then zCDP
	// composition takes over and allows more; the accountant decides alone
	// how many, and the concurrent run must admit exactly that many.
	total := Budget{Epsilon: 10, Delta: 1e-5}
	lim := Limits{User: total}
	c := Charge{User: "alice", Mechanism: "laplace", Epsilon: eps, Delta: 1e-9}
	n := sequentialAdmits(t, c, total)
	if n <= 100 || n >= 512 {
		t.Fatalf("the accountant admits %d charges in sequence; the test needs 100 < n < 512", n)
	}
	got := hammer(t, l, 8, lim, func(int) Charge { return c })
	if got != n {
		t.Errorf("%d of 512 concurrent charges succeeded, want exactly %d", got, n)
	}
	s := mustSpent(t, l, "alice")
	if s.Charges != n || math.Abs(s.Epsilon-float64(n)*eps) > 1e-9 {
		t.Errorf("spent %+v, want ε=%g over %d charges", s, float64(n)*eps, n)
	}
	withinBudget(t, "alice", s, total)
	if es := mustEntries(t, l, "alice", 0); len(es) != n {
		t.Errorf("trail has %d entries, want %d", len(es), n)
	}
}

func TestConcurrentChargesSharedPool(t *testing.T) {
	const eps = 0.1
	l := openTemp(t)
	// δ = 0: no zCDP conversion is possible, so basic composition alone
	// decides: exactly 100 charges of 0.1.
	pool := Budget{Epsilon: 10, Delta: 0}
	lim := Limits{User: Budget{Epsilon: 1, Delta: 0}, Pool: &pool}
	n := sequentialAdmits(t, Charge{User: "u", Epsilon: eps}, pool)
	if n != 100 {
		t.Fatalf("the accountant admits %d charges into a pool of ε=10 δ=0, want 100", n)
	}
	got := hammer(t, l, 4, lim, func(g int) Charge {
		return Charge{User: "user" + string(rune('A'+g)), Role: "analyst", Epsilon: eps}
	})
	if got != n {
		t.Errorf("%d of 256 concurrent pool charges succeeded, want exactly %d", got, n)
	}
	s, err := l.RoleSpent(context.Background(), "analyst")
	if err != nil {
		t.Fatal(err)
	}
	if s.Charges != n || math.Abs(s.Epsilon-float64(n)*eps) > 1e-9 || s.Epsilon > float64(n)*eps*(1+relTol) {
		t.Errorf("pool spent %+v, want ε=%g over %d charges", s, float64(n)*eps, n)
	}
	users := 0
	for g := range 64 {
		users += mustSpent(t, l, "user"+string(rune('A'+g))).Charges
	}
	if users != n {
		t.Errorf("users' totals count %d charges, the pool %d", users, n)
	}
}
