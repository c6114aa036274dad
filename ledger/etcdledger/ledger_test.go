package etcdledger

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dpproxy/dpproxy/ledger"
)

func f(x float64) *float64 { return &x }

func TestChargeRefundBudgetsAndExport(t *testing.T) {
	ctx := context.Background()
	l := openTest(t, t.Name())
	base := ledger.Limits{User: ledger.Budget{Epsilon: 1, Delta: 1e-5}}
	c := ledger.Charge{User: "ali/ce", Role: "analyst", Statement: "SELECT COUNT(*) FROM t", Mechanism: "laplace", Epsilon: 0.6}
	r, err := l.Charge(ctx, c, base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Charge(ctx, c, base); !errors.Is(err, ledger.ErrBudgetExceeded) {
		t.Fatalf("charge past ε=1: %v", err)
	}
	if err := l.Refund(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if err := l.Refund(ctx, r.ID); !errors.Is(err, ledger.ErrAlreadyRefunded) {
		t.Errorf("second refund: %v", err)
	}
	if err := l.Refund(ctx, strings.Repeat("0", 31)+"1"); !errors.Is(err, ledger.ErrNoSuchEntry) {
		t.Errorf("refund of an unknown ID: %v", err)
	}
	if s, _ := l.UserSpent(ctx, "ali/ce"); s.Charges != 0 {
		t.Errorf("after the refund: %+v", s)
	}
	// Budgets set in SQL apply in the charge's transaction.
	if err := l.SetRoleBudget(ctx, "dba", "analyst", ledger.BudgetChange{Epsilon: f(2), PoolEpsilon: f(5)}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := l.Charge(ctx, c, base); err != nil {
			t.Fatalf("charge within the role's ε=2 set in SQL: %v", err)
		}
	}
	if _, err := l.Charge(ctx, c, base); !errors.Is(err, ledger.ErrBudgetExceeded) {
		t.Fatalf("charge past ε=2: %v", err)
	}
	if s, _ := l.RoleSpent(ctx, "analyst"); s.Charges != 3 || math.Abs(s.Epsilon-1.8) > 1e-12 {
		t.Errorf("the pool set in SQL holds %+v", s)
	}
	if err := l.SetUserBudget(ctx, "dba", "ali/ce", ledger.BudgetChange{Epsilon: f(5)}); err != nil {
		t.Fatal(err)
	}
	if err := l.ResetUser(ctx, "dba", "ali/ce"); err != nil {
		t.Fatal(err)
	}
	if s, _ := l.UserSpent(ctx, "ali/ce"); s.Charges != 0 || s.Epoch == "" {
		t.Errorf("after the reset: %+v", s)
	}
	roles, users, err := l.Overrides(ctx)
	if err != nil || *roles["analyst"].PoolEpsilon != 5 || *users["ali/ce"].Epsilon != 5 {
		t.Errorf("overrides %+v %+v %v", roles, users, err)
	}
	lim, err := l.Limits(ctx, "analyst", "ali/ce", base)
	if err != nil || lim.User.Epsilon != 5 || lim.Pool == nil || lim.Pool.Epsilon != 5 {
		t.Errorf("limits %+v %v", lim, err)
	}

	es, err := l.Entries(ctx, "ali/ce", 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range es {
		kinds = append(kinds, e.Kind)
	}
	// Newest first: reset, budget, 3 charges, refund, the refunded charge.
	if got := strings.Join(kinds, ","); got != "reset,budget,charge,charge,charge,refund,charge" {
		t.Errorf("alice's trail: %s", got)
	}
	if last := es[len(es)-1]; last.ID != r.ID || last.Outcome != ledger.OutcomeRefunded || last.Statement != c.Statement {
		t.Errorf("oldest entry %+v", last)
	}
	if all, _ := l.Entries(ctx, "", 2); len(all) != 2 || all[0].Kind != ledger.KindReset {
		t.Errorf("the 2 newest entries: %+v", all)
	}

	var buf bytes.Buffer
	if err := ledger.Export(ctx, l, &buf, "csv"); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(rows) != 1+8 || rows[1][0] != r.ID {
		t.Errorf("CSV export of %d rows (%v): %q", len(rows), err, rows)
	}

	if err := l.Put(ctx, "models", "m/1", []byte("w")); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := l.Get(ctx, "models", "m/1"); !ok || err != nil || string(v) != "w" {
		t.Errorf("Get = %q %v %v", v, ok, err)
	}
	if m, _ := l.List(ctx, "models"); len(m) != 1 || string(m["m/1"]) != "w" {
		t.Errorf("List = %q", m)
	}
	if ok, err := l.Create(ctx, "models", "m/1", []byte("other")); ok || err != nil {
		t.Errorf("Create of an existing key = %v, %v", ok, err)
	}
	if v, _, _ := l.Get(ctx, "models", "m/1"); string(v) != "w" {
		t.Errorf("Create replaced the value: %q", v)
	}
	if err := l.Delete(ctx, "models", "m/1"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := l.Get(ctx, "models", "m/1"); ok {
		t.Error("deleted key still there")
	}
	// Of concurrent Creates of one key exactly one wins.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var won []string
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := fmt.Sprint("racer ", i)
			ok, err := l.Create(ctx, "models", "race", []byte(v))
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				won = append(won, v)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if v, _, _ := l.Get(ctx, "models", "race"); len(won) != 1 || string(v) != won[0] {
		t.Errorf("concurrent Creates: winners %q, stored %q; want exactly one", won, v)
	}
}

func TestOpenRefusesAForeignPrefix(t *testing.T) {
	l := openTest(t, t.Name()+"-ok")
	if _, err := l.cli.Put(context.Background(), t.Name()+"/m/format", "not json"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), Config{Endpoints: []string{endpoint}, Prefix: t.Name()}); err == nil {
		t.Error("Open accepted a prefix whose format marker is not a ledger's")
	}
}

// sequential is how many copies of mk's charges are admitted one after the
// other, on a Badger ledger in memory: the reference the fleet must match.
func sequential(t *testing.T, total int, base ledger.Limits, mk func(i int) ledger.Charge) int {
	t.Helper()
	ref, err := ledger.Open("", ledger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	n := 0
	for i := range total {
		if _, err := ref.Charge(context.Background(), mk(i), base); err == nil {
			n++
		} else if !errors.Is(err, ledger.ErrBudgetExceeded) {
			t.Fatal(err)
		}
	}
	return n
}

// Two ledgers on one etcd, as two proxies behind a load balancer, hammered by
// 64 goroutines: the shared budget holds exactly.
func TestTwoProxiesShareOneBudget(t *testing.T) {
	for _, tc := range []struct {
		name string
		base ledger.Limits
		mk   func(g int) ledger.Charge
	}{
		// One user, Laplace charges: basic composition, then zCDP.
		{"one user", ledger.Limits{User: ledger.Budget{Epsilon: 3, Delta: 1e-5}},
			func(int) ledger.Charge { return ledger.Charge{User: "alice", Role: "analyst", Epsilon: 0.05} }},
		// 64 users of one role drawing from its pool (δ=0: basic only).
		{"one role pool", ledger.Limits{User: ledger.Budget{Epsilon: 1, Delta: 0}, Pool: &ledger.Budget{Epsilon: 4, Delta: 0}},
			func(g int) ledger.Charge {
				return ledger.Charge{User: fmt.Sprintf("user%d", g), Role: "analyst", Epsilon: 0.05}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			proxies := []*Ledger{openTest(t, t.Name()), openTest(t, t.Name())}
			const each = 3
			want := sequential(t, 64*each, tc.base, tc.mk)
			if want == 0 || want >= 64*each {
				t.Fatalf("the reference admits %d of %d: the test needs a budget that runs out", want, 64*each)
			}
			var ok atomic.Int64
			var wg sync.WaitGroup
			for g := range 64 {
				l := proxies[g%2]
				wg.Go(func() {
					for range each {
						_, err := l.Charge(ctx, tc.mk(g), tc.base)
						switch {
						case err == nil:
							ok.Add(1)
						case !errors.Is(err, ledger.ErrBudgetExceeded):
							t.Errorf("goroutine %d: %v", g, err)
						}
					}
				})
			}
			wg.Wait()
			if got := int(ok.Load()); got != want {
				t.Errorf("%d charges succeeded across two proxies, want exactly %d", got, want)
			}
			es, err := proxies[0].Entries(ctx, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != want {
				t.Errorf("the trail has %d entries, want %d", len(es), want)
			}
			users, pools, err := proxies[1].Totals(ctx)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, s := range users {
				n += s.Charges
				a := s.Account(tc.base.User)
				if a.Effective.Epsilon > tc.base.User.Epsilon*(1+1e-12) {
					t.Errorf("a user is over budget: %s", a)
				}
			}
			if n != want {
				t.Errorf("users' totals count %d charges, want %d", n, want)
			}
			if tc.base.Pool != nil {
				if a := pools["analyst"].Account(*tc.base.Pool); pools["analyst"].Charges != want || a.Effective.Epsilon > tc.base.Pool.Epsilon*(1+1e-12) {
					t.Errorf("pool %+v: %s", pools["analyst"], a)
				}
			}
		})
	}
}
