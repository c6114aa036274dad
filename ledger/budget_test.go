package ledger

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func f(x float64) *float64 { return &x }

func TestBudgetsSetInSQLOverridePolicy(t *testing.T) {
	ctx := context.Background()
	l := openTemp(t)
	base := Limits{User: Budget{Epsilon: 1, Delta: 0}}
	alice := Charge{User: "alice", Role: "analyst", Epsilon: 0.6}
	bob := Charge{User: "bob", Role: "analyst", Epsilon: 0.6}

	if _, err := l.Charge(ctx, alice, base); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Charge(ctx, alice, base); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("second charge under the policy's ε=1: %v", err)
	}
	// The role's budget set in SQL takes precedence over the policy file.
	if err := l.SetRoleBudget(ctx, "dba", "analyst", BudgetChange{Epsilon: f(2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Charge(ctx, alice, base); err != nil {
		t.Fatalf("charge after the role's budget was raised to 2: %v", err)
	}
	// A user's budget overrides the role's.
	if err := l.SetUserBudget(ctx, "dba", "alice", BudgetChange{Epsilon: f(1.5)}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Charge(ctx, alice, base); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("charge past alice's own ε=1.5: %v", err)
	}
	if _, err := l.Charge(ctx, bob, base); err != nil {
		t.Fatalf("bob still has the role's ε=2: %v", err)
	}
	// A pool set in SQL for a role without one in the policy.
	if err := l.SetRoleBudget(ctx, "dba", "analyst", BudgetChange{PoolEpsilon: f(1.5), MaxEpsilonPerQuery: f(0.7)}); err != nil {
		t.Fatal(err)
	}
	lim, err := l.Limits(ctx, "analyst", "bob", base)
	if err != nil {
		t.Fatal(err)
	}
	if lim.User != (Budget{2, 0}) || lim.Pool == nil || *lim.Pool != (Budget{1.5, 0}) || lim.MaxPerQuery.Epsilon != 0.7 {
		t.Errorf("resolved limits %+v (pool %+v)", lim, lim.Pool)
	}
	if _, err := l.Charge(ctx, Charge{User: "bob", Role: "analyst", Epsilon: 0.8}, base); !errors.Is(err, ErrBudgetExceeded) {
		t.Errorf("charge over the per-query cap set in SQL: %v", err)
	}
	if _, err := l.Charge(ctx, bob, base); err != nil {
		t.Fatalf("bob's first pool charge: %v", err)
	}
	if _, err := l.Charge(ctx, Charge{User: "carol", Role: "analyst", Epsilon: 0.6}, base); err != nil {
		t.Fatalf("carol's pool charge (1.2 of 1.5): %v", err)
	}
	_, err = l.Charge(ctx, Charge{User: "dave", Role: "analyst", Epsilon: 0.6}, base)
	var be *BudgetError
	if !errors.As(err, &be) || !be.Pool {
		t.Errorf("dave past the pool of 1.5 (1.8): %v", err)
	}

	roles, users, err := l.Overrides(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := roles["analyst"]
	if r.Epsilon == nil || *r.Epsilon != 2 || *r.PoolEpsilon != 1.5 || r.By != "dba" || r.At.IsZero() {
		t.Errorf("role override %+v", r)
	}
	if u := users["alice"]; u.Epsilon == nil || *u.Epsilon != 1.5 || u.Delta != nil {
		t.Errorf("user override %+v", u)
	}

	// Every change is an audit entry with who, old and new.
	var budgets []Entry
	for _, e := range mustEntries(t, l, "", 0) {
		if e.Kind == KindBudget {
			budgets = append(budgets, e)
		}
	}
	if len(budgets) != 3 {
		t.Fatalf("%d budget entries, want 3", len(budgets))
	}
	last := budgets[0]
	if last.Role != "analyst" || last.By != "dba" || last.Old.String() != "EPSILON 2" ||
		last.New.String() != "EPSILON 2 MAX EPSILON PER QUERY 0.7 POOL EPSILON 1.5" {
		t.Errorf("newest budget entry: role=%s by=%s old=%s new=%s", last.Role, last.By, last.Old, last.New)
	}
	if es := mustEntries(t, l, "alice", 0); es[0].Kind != KindBudget || es[0].New.String() != "EPSILON 1.5" {
		t.Errorf("alice's trail does not start with her budget change: %+v", es[0])
	}
}

func TestBudgetChangesAreValidated(t *testing.T) {
	ctx := context.Background()
	l := openTemp(t)
	for name, tc := range map[string]struct {
		user bool
		ch   BudgetChange
	}{
		"nothing":        {false, BudgetChange{}},
		"negative ε":     {false, BudgetChange{Epsilon: f(-1)}},
		"δ of 1":         {false, BudgetChange{Delta: f(1)}},
		"pool for user":  {true, BudgetChange{PoolEpsilon: f(1)}},
		"cap for user":   {true, BudgetChange{MaxEpsilonPerQuery: f(1)}},
		"NaN pool delta": {false, BudgetChange{PoolDelta: f(nan())}},
	} {
		var err error
		if tc.user {
			err = l.SetUserBudget(ctx, "dba", "alice", tc.ch)
		} else {
			err = l.SetRoleBudget(ctx, "dba", "analyst", tc.ch)
		}
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if es := mustEntries(t, l, "", 0); len(es) != 0 {
		t.Errorf("refused changes wrote %d entries", len(es))
	}
}

func nan() float64 { var z float64; return z / z }

func TestResetUser(t *testing.T) {
	ctx := context.Background()
	l := openTemp(t)
	pool := Budget{Epsilon: 10, Delta: 0}
	lim := Limits{User: Budget{Epsilon: 1, Delta: 0}, Pool: &pool}
	c := Charge{User: "alice", Role: "analyst", Epsilon: 1}
	old, err := l.Charge(ctx, c, lim)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Charge(ctx, c, lim); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("charge past the allowance: %v", err)
	}
	if err := l.ResetUser(ctx, "dba", "alice"); err != nil {
		t.Fatal(err)
	}
	if s := mustSpent(t, l, "alice"); s.Charges != 0 || s.Epsilon != 0 {
		t.Errorf("after the reset alice spent %+v", s)
	}
	if _, err := l.Charge(ctx, c, lim); err != nil {
		t.Fatalf("charge after the reset: %v", err)
	}
	// Refunding the charge from before the reset must not hand alice back
	// budget she spent after it; the pool gets its share back.
	if err := l.Refund(ctx, old.ID); err != nil {
		t.Fatal(err)
	}
	if s := mustSpent(t, l, "alice"); s.Charges != 1 || s.Epsilon != 1 {
		t.Errorf("a refund of a charge older than the reset changed alice's totals: %+v", s)
	}
	if s, _ := l.RoleSpent(ctx, "analyst"); s.Charges != 1 || s.Epsilon != 1 {
		t.Errorf("pool after the refund: %+v", s)
	}
	var reset *Entry
	for _, e := range mustEntries(t, l, "alice", 0) {
		if e.Kind == KindReset {
			reset = &e
		}
	}
	if reset == nil || reset.By != "dba" || reset.Reset == nil || reset.Reset.Epsilon != 1 || reset.Reset.Charges != 1 {
		t.Errorf("reset entry %+v", reset)
	}
}

func TestExportAndShow(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "ledger")
	l, err := Open(dir, Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	lim := Limits{User: Budget{Epsilon: 10, Delta: 1e-5}}
	r, err := l.Charge(ctx, Charge{User: "alice", Role: "analyst", Statement: `SELECT COUNT(*), "x,y" FROM t`,
		Fingerprint: "fp1", Mechanism: "gaussian", Epsilon: 1, Delta: 1e-6, Rho: 0.026, DeltaInRho: 1e-6}, lim)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Charge(ctx, Charge{User: "bob", Role: "analyst", Mechanism: "laplace", Epsilon: 0.5}, lim); err != nil {
		t.Fatal(err)
	}
	if err := l.Refund(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if err := l.SetRoleBudget(ctx, "dba", "analyst", BudgetChange{Epsilon: f(5)}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// Offline, read-only, as dpproxy ledger export does.
	ro, err := Open(dir, Options{Logger: quietLogger(), ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open: %v", err)
	}
	defer ro.Close()
	if _, err := ro.Charge(ctx, Charge{User: "x", Epsilon: 1}, lim); err == nil {
		t.Error("a read-only ledger took a charge")
	}

	var buf bytes.Buffer
	if err := Export(ctx, ro, &buf, "csv"); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatalf("the CSV export does not parse: %v", err)
	}
	if len(rows) != 5 || strings.Join(rows[0], ",") != strings.Join(csvHeader, ",") {
		t.Fatalf("CSV export: %d rows, header %v", len(rows), rows[0])
	}
	first := rows[1] // oldest first: alice's charge, marked refunded
	if first[0] != r.ID || first[2] != KindCharge || first[3] != OutcomeRefunded || first[6] != `SELECT COUNT(*), "x,y" FROM t` ||
		first[7] != "fp1" || first[8] != "gaussian" || first[9] != "1" || first[10] != "1e-06" || first[11] != "0.026" {
		t.Errorf("first CSV row %q", first)
	}
	if last := rows[4]; last[2] != KindBudget || last[17] != "dba" || last[18] != "(policy file)" || last[19] != "EPSILON 5" {
		t.Errorf("last CSV row %q", last)
	}

	buf.Reset()
	if err := Export(ctx, ro, &buf, "json"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Format  string
		Users   map[string]Spent
		Entries []struct {
			ID      string
			Kind    string
			Outcome string
			Charge  Charge
		}
		RoleBudgets map[string]RoleBudget `json:"role_budgets"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("the JSON export does not parse: %v\n%s", err, buf.String())
	}
	if doc.Format != formatName || len(doc.Entries) != 4 || doc.Entries[0].ID != r.ID || doc.Entries[0].Charge.Rho != 0.026 ||
		doc.Users["bob"].Epsilon != 0.5 || *doc.RoleBudgets["analyst"].Epsilon != 5 {
		t.Errorf("JSON export: %+v", doc)
	}
	if err := Export(ctx, ro, &buf, "xml"); err == nil {
		t.Error("export as xml succeeded")
	}

	buf.Reset()
	err = Show(ctx, ro, &buf, ShowOptions{UserLimits: func(string) (string, Limits, bool) { return "analyst", lim, true }})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bob", "ε=0.5 of 5 (basic", "role analyst", "EPSILON 5", "refund of " + r.ID} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("Show lacks %q:\n%s", want, buf.String())
		}
	}
}
