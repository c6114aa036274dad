package proxy_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/dpproxy/dpproxy/backend"
	"github.com/dpproxy/dpproxy/ledger"
	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/proxy"
)

// trainEnv is an engine over a SQLite table person(pid, age, sex, income)
// of 200 persons, one row each, with users alice and bob (role analyst) and
// root (an admin).
type trainEnv struct {
	eng  *proxy.Engine
	led  *ledger.Ledger
	path string
}

func newTrainEnv(t *testing.T) *trainEnv {
	t.Helper()
	path := filepath.Join(t.TempDir(), "train.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{"CREATE TABLE person (pid INTEGER, age INTEGER, sex INTEGER, income INTEGER)"}
	for p := 1; p <= 200; p++ {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO person VALUES (%d, %d, %d, %d)", p, 18+p%60, p%2, 1000*(p%50)))
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	b, err := backend.Open(context.Background(), "sqlite", path, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	led, err := ledger.Open("", ledger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { led.Close() })
	lo, hi, ilo, ihi := 0.0, 100.0, 0.0, 100000.0
	pol := &policy.Policy{
		Backend:  policy.Backend{Driver: "sqlite", DSN: path},
		Defaults: policy.Defaults{Epsilon: 1, Delta: 1e-6, Mechanism: "laplace"},
		Roles: map[string]*policy.Role{
			"analyst": {Budget: policy.Budget{Epsilon: 100, Delta: 1e-5}, MaxEpsilonPerQuery: 5, MinEpsilonPerQuery: 1e-3},
			"admin":   {Admin: true, Budget: policy.Budget{Epsilon: 100, Delta: 1e-5}, MinEpsilonPerQuery: 1e-3},
			"nodelta": {Budget: policy.Budget{Epsilon: 100}, MinEpsilonPerQuery: 1e-3},
		},
		Users: map[string]*policy.User{
			"alice": {Password: "x", Role: "analyst"},
			"bob":   {Password: "x", Role: "analyst"},
			"root":  {Password: "x", Role: "admin"},
			"carol": {Password: "x", Role: "nodelta"},
		},
		Tables: map[string]*policy.Table{
			"person": {
				PrivacyUnit: "pid", UnitName: "person", MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1,
				Columns: map[string]*policy.Column{
					"age":    {Type: policy.TypeInt, Lower: &lo, Upper: &hi},
					"sex":    {Type: policy.TypeInt, PublicValues: []any{int64(0), int64(1)}},
					"income": {Type: policy.TypeInt, Lower: &ilo, Upper: &ihi},
				},
			},
		},
	}
	if err := pol.Validate(); err != nil {
		t.Fatal(err)
	}
	eng, err := proxy.New(context.Background(), proxy.Config{Policy: pol, Backend: b, Ledger: led, Database: "main"})
	if err != nil {
		t.Fatal(err)
	}
	return &trainEnv{eng: eng, led: led, path: path}
}

func (e *trainEnv) session(t *testing.T, user string) *proxy.Session {
	t.Helper()
	s, err := e.eng.NewSession(context.Background(), user, "main", parser.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (e *trainEnv) spent(t *testing.T, user string) float64 {
	t.Helper()
	sp, err := e.led.UserSpent(context.Background(), user)
	if err != nil {
		t.Fatal(err)
	}
	return sp.Epsilon
}

const trainQuery = "TRAIN PRIVATE LOGREG %s ON (SELECT age, sex FROM person) LABEL sex = 1 WITH (%s)"

// Every option is checked before the charge (issue 11, item 6): a bad value
// costs nothing, and leaves the model's name free.
func TestTrainOptionsRefusedBeforeCharge(t *testing.T) {
	e := newTrainEnv(t)
	s := e.session(t, "alice")
	ctx := context.Background()
	for opt, want := range map[string]string{
		"components = 100000000":        "components must be an integer",
		"components = 2.5":              "components must be an integer",
		"components = 0":                "components must be an integer",
		"kernel = 'rbf', gamma = 0":     "gamma must be",
		"kernel = 'rbf', gamma = -1":    "gamma must be",
		"kernel = 'poly'":               "kernel must be",
		"kernel = 'linear', gamma = 1":  "apply to kernel = 'rbf'",
		"method = 'sgd'":                "method must be",
		"lambda = 0":                    "lambda must be",
		"lambda = 'none'":               "lambda must be",
		"epsilon = 0.000001":            "at least 0.001",
		"epsilon = 6":                   "at most 5",
		"epsilon = 'one'":               "epsilon must be",
		"max_bytes = 4":                 "max_bytes must be at least",
		"max_bytes = 1.5":               "max_bytes must be a positive integer",
		"max_bytes = 1000000000000":     "max_bytes must be a positive integer",
		"kernel = 'rbf', max_bytes = 8": "max_bytes must be at least",
		"nonsense = 1":                  "unknown option",
	} {
		_, err := s.Execute(ctx, fmt.Sprintf(trainQuery, "m", opt))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("WITH (%s): %v, want a refusal about %q", opt, err, want)
		}
	}
	for _, q := range []string{
		"EVALUATE MODEL m ON (SELECT age, sex FROM person) LABEL sex = 1 WITH (epsilon = 0.000001)",
		"EVALUATE MODEL m ON (SELECT age, sex FROM person) LABEL sex = 1 WITH (epsilon = 'x')",
		"EVALUATE MODEL m ON (SELECT age, sex FROM person) LABEL sex = 1 WITH (epsilon = 100)",
	} {
		if _, err := s.Execute(ctx, q); err == nil {
			t.Errorf("%s: accepted before any model exists", q)
		}
	}
	if got := e.spent(t, "alice"); got != 0 {
		t.Fatalf("refused statements charged ε = %v", got)
	}
	// The refusals released the name: it trains now, and EVALUATE's checks
	// refuse before its charge too.
	if _, err := s.Execute(ctx, fmt.Sprintf(trainQuery, "m", "epsilon = 1")); err != nil {
		t.Fatal(err)
	}
	for _, opt := range []string{"epsilon = 0.000001", "epsilon = 'x'", "epsilon = 100", "epsilon = 1, lambda = 1"} {
		q := "EVALUATE MODEL m ON (SELECT age, sex FROM person) LABEL sex = 1 WITH (" + opt + ")"
		if _, err := s.Execute(ctx, q); err == nil {
			t.Errorf("%s: accepted", q)
		}
	}
	if got := e.spent(t, "alice"); got != 1 {
		t.Errorf("after one TRAIN at ε = 1 and refused EVALUATEs: spent %v", got)
	}
	// A role without δ cannot pay the memory cap's δ: refused, not charged.
	c := e.session(t, "carol")
	if _, err := c.Execute(ctx, fmt.Sprintf(trainQuery, "c", "epsilon = 1")); err == nil || !strings.Contains(err.Error(), "δ") {
		t.Errorf("a role without δ: %v", err)
	}
	if got := e.spent(t, "carol"); got != 0 {
		t.Errorf("a refused TRAIN charged ε = %v", got)
	}
}

// The pair: a memory cap of a few bytes must not fail exactly when
// the target person matches. Both statements succeed, return the same
// columns and cost the same.
func TestTrainMemoryCapIsNotAnOracle(t *testing.T) {
	e := newTrainEnv(t)
	ctx := context.Background()
	// One row takes 5 bytes (age as float32, the label): max_bytes = 5
	// holds one row, and person 11 always matches, so the rows exceed the
	// cap exactly when person 10 matches too.
	for i, where := range []string{"pid = 11 OR (pid = 10 AND income > 5000)", "pid = 11 OR (pid = 10 AND income > 50000)"} {
		user := []string{"alice", "bob"}[i]
		s := e.session(t, user)
		q := fmt.Sprintf("TRAIN PRIVATE LOGREG p%d ON (SELECT age, sex FROM person WHERE %s) LABEL sex = 1 WITH (epsilon = 0.001, max_bytes = 5)", i, where)
		res, err := s.Execute(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		var cols []string
		for _, c := range res.Columns {
			cols = append(cols, c.Name)
		}
		if got := strings.Join(cols, ","); got != "feature,weight,model,epsilon,delta,lambda,method,rows_used,trained_at,trained_by,sample_rate" || len(res.Rows) != 2 {
			t.Errorf("%s: columns %s, %d rows", where, got, len(res.Rows))
		}
		sp, _ := e.led.UserSpent(ctx, user)
		if sp.Epsilon != 0.001 || sp.Delta != 0x1p-40 {
			t.Errorf("%s: charged ε=%v δ=%v, want ε=0.001 δ=2⁻⁴⁰", where, sp.Epsilon, sp.Delta)
		}
	}
}

// Two TRAINs of one name at once: exactly one succeeds; the other is refused
// before it is charged (run with -race).
func TestConcurrentTrainSameName(t *testing.T) {
	e := newTrainEnv(t)
	ctx := context.Background()
	for round := range 5 {
		name := fmt.Sprint("race", round)
		users := []string{"alice", "bob"}
		sessions := []*proxy.Session{e.session(t, "alice"), e.session(t, "bob")}
		before := []float64{e.spent(t, "alice"), e.spent(t, "bob")}
		errs := make([]error, 2)
		var start, done sync.WaitGroup
		start.Add(1)
		for i := range 2 {
			done.Add(1)
			go func() {
				defer done.Done()
				start.Wait()
				_, errs[i] = sessions[i].Execute(ctx, fmt.Sprintf(trainQuery, name, "epsilon = 1"))
			}()
		}
		start.Done()
		done.Wait()
		won := 0
		for i, err := range errs {
			charged := e.spent(t, users[i]) - before[i]
			switch {
			case err == nil:
				won++
				if charged != 1 {
					t.Errorf("round %d: the winner %s was charged %v", round, users[i], charged)
				}
			case strings.Contains(err.Error(), "exists"):
				if charged != 0 {
					t.Errorf("round %d: the loser %s was charged %v", round, users[i], charged)
				}
			default:
				t.Errorf("round %d: %s: %v", round, users[i], err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d of two concurrent TRAINs of %s succeeded", round, won, name)
		}
	}
}

// Models are read by their owner and admins only; names stay global.
func TestModelAccess(t *testing.T) {
	e := newTrainEnv(t)
	ctx := context.Background()
	alice, bob, root := e.session(t, "alice"), e.session(t, "bob"), e.session(t, "root")
	if _, err := alice.Execute(ctx, fmt.Sprintf(trainQuery, "mine", "epsilon = 1")); err != nil {
		t.Fatal(err)
	}
	list := func(s *proxy.Session) []string {
		res, err := s.Execute(ctx, "SHOW MODELS")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range res.Rows {
			names = append(names, fmt.Sprint(r[0]))
		}
		return names
	}
	if got := list(alice); len(got) != 1 || got[0] != "mine" {
		t.Errorf("alice's SHOW MODELS: %v", got)
	}
	if got := list(bob); len(got) != 0 {
		t.Errorf("bob's SHOW MODELS lists alice's model: %v", got)
	}
	if got := list(root); len(got) != 1 {
		t.Errorf("the admin's SHOW MODELS: %v", got)
	}
	bobSpent := e.spent(t, "bob")
	for _, q := range []string{"SHOW MODEL mine", "EVALUATE MODEL mine ON (SELECT age, sex FROM person) LABEL sex = 1 WITH (epsilon = 1)", "DROP MODEL mine"} {
		if _, err := bob.Execute(ctx, q); err == nil || !strings.Contains(err.Error(), "only") {
			t.Errorf("bob: %s: %v", q, err)
		}
	}
	if got := e.spent(t, "bob"); got != bobSpent {
		t.Errorf("bob's refused EVALUATE charged %v", got-bobSpent)
	}
	// The name is taken for everyone.
	if _, err := bob.Execute(ctx, fmt.Sprintf(trainQuery, "mine", "epsilon = 1")); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("bob trained over alice's name: %v", err)
	}
	for _, q := range []string{"SHOW MODEL mine", "EVALUATE MODEL mine ON (SELECT age, sex FROM person) LABEL sex = 1 WITH (epsilon = 1)"} {
		if _, err := root.Execute(ctx, q); err != nil {
			t.Errorf("admin: %s: %v", q, err)
		}
		if _, err := alice.Execute(ctx, q); err != nil {
			t.Errorf("owner: %s: %v", q, err)
		}
	}
	if _, err := alice.Execute(ctx, "DROP MODEL mine"); err != nil {
		t.Errorf("owner's DROP: %v", err)
	}
}

// A failure after the charge leaves no half model: the name is free again,
// and the charge stands.
func TestTrainFailureAfterChargeReleasesTheName(t *testing.T) {
	e := newTrainEnv(t)
	ctx := context.Background()
	s := e.session(t, "alice")
	// Break the table behind the engine's back: the statement passes every
	// check, is charged, and fails in the backend.
	db, err := sql.Open("sqlite", e.path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("ALTER TABLE person RENAME TO person_gone"); err != nil {
		t.Fatal(err)
	}
	_, err = s.Execute(ctx, fmt.Sprintf(trainQuery, "half", "epsilon = 1"))
	if err == nil || !strings.Contains(err.Error(), "charge stands") {
		t.Fatalf("TRAIN over a missing table: %v", err)
	}
	if got := e.spent(t, "alice"); got != 1 {
		t.Errorf("the failed TRAIN's charge: %v, want 1", got)
	}
	if _, ok, _ := e.led.Get(ctx, "models", "half"); ok {
		t.Error("a failed TRAIN left its name reserved")
	}
	if _, err := db.Exec("ALTER TABLE person_gone RENAME TO person"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := s.Execute(ctx, fmt.Sprintf(trainQuery, "half", "epsilon = 1")); err != nil {
		t.Errorf("the name after a failed TRAIN: %v", err)
	}
}
