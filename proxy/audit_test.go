package proxy_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/dpproxy/dpproxy/backend"
	"github.com/dpproxy/dpproxy/ledger"
	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/proxy"
)

// auditDB builds a SQLite database with table t(pid, x, g): persons 2..20
// with one row each, and — unless without — person 1 with three rows of
// x=100; g is 0 everywhere. Table u(pid, y) has one row per person, person 1
// included unless without. The two databases are neighbours: they differ in
// all rows of person 1.
func auditDB(t *testing.T, without bool) *backend.Backend {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{"CREATE TABLE t (pid INTEGER, x INTEGER, g INTEGER)", "CREATE TABLE u (pid INTEGER, y INTEGER)"}
	for p := 2; p <= 20; p++ {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO t VALUES (%d, %d, 0)", p, 10+p), fmt.Sprintf("INSERT INTO u VALUES (%d, %d)", p, p%3))
	}
	if !without {
		stmts = append(stmts, "INSERT INTO t VALUES (1, 100, 0), (1, 100, 0), (1, 100, 0)", "INSERT INTO u VALUES (1, 1)")
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
	return b
}

func auditPolicy(t *testing.T) *policy.Policy {
	t.Helper()
	lo, hi := 0.0, 100.0
	pol := &policy.Policy{
		Backend:  policy.Backend{Driver: "sqlite", DSN: "audit.db"},
		Defaults: policy.Defaults{Epsilon: 1, Delta: 1e-6, Mechanism: "laplace"},
		// The audit measures the noise, over many thousand answers: no
		// response quantum.
		Limits: policy.Limits{ResponseQuantum: policy.Duration{Duration: -1}},
		Roles:  map[string]*policy.Role{"auditor": {Budget: policy.Budget{Epsilon: 1e9, Delta: 0.5}}},
		Users:  map[string]*policy.User{"auditor": {Password: "x", Role: "auditor"}},
		Tables: map[string]*policy.Table{
			"t": {
				PrivacyUnit:      "pid",
				UnitName:         "person",
				MaxRowsPerUnit:   2,
				MaxGroupsPerUnit: 1,
				Columns: map[string]*policy.Column{
					"x": {Type: policy.TypeInt, Lower: &lo, Upper: &hi},
					"g": {Type: policy.TypeInt, PublicValues: []any{int64(0), int64(1)}},
				},
			},
			"u": {PrivacyUnit: "pid", UnitName: "person", MaxRowsPerUnit: 1},
		},
	}
	if err := pol.Validate(); err != nil {
		t.Fatal(err)
	}
	return pol
}

// sample runs q n times against a database and returns the answers.
func sample(t *testing.T, b *backend.Backend, q string, n int) []float64 {
	t.Helper()
	led, err := ledger.Open("", ledger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	ctx := context.Background()
	eng, err := proxy.New(ctx, proxy.Config{Policy: auditPolicy(t), Backend: b, Ledger: led, Database: "main"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := eng.NewSession(ctx, "auditor", "main", parser.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Execute(ctx, "SET dp_cache = off"); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, n)
	for i := range out {
		res, err := s.Execute(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		// The last column of the first row: the value of a query without
		// GROUP BY, or of the first group (ORDER BY its key).
		switch v := res.Rows[0][len(res.Rows[0])-1].(type) {
		case int64:
			out[i] = float64(v)
		case float64:
			out[i] = v
		default:
			t.Fatalf("answer of type %T", v)
		}
	}
	return out
}

// privacyLossLowerBound estimates, from samples of M(D) and M(D′), a lower
// confidence bound on max over bins of |ln P[M(D)∈bin] − ln P[M(D′)∈bin]|:
// if it exceeds ε, the release is not ε-DP (Ding et al. 2018, "Detecting
// Violations of Differential Privacy", CCS, in its simplest form). Each bin
// probability gets a z-sigma binomial interval; only bins with at least
// minCount samples on both sides count. It also returns the point estimate.
func privacyLossLowerBound(a, b []float64, width float64, minCount int, z float64) (lower, point float64) {
	bin := func(xs []float64) map[int]int {
		m := map[int]int{}
		for _, x := range xs {
			m[int(math.Floor(x/width))]++
		}
		return m
	}
	ha, hb := bin(a), bin(b)
	na, nb := float64(len(a)), float64(len(b))
	for k, ca := range ha {
		cb := hb[k]
		if ca < minCount || cb < minCount {
			continue
		}
		pa, pb := float64(ca)/na, float64(cb)/nb
		sa, sb := z*math.Sqrt(pa*(1-pa)/na), z*math.Sqrt(pb*(1-pb)/nb)
		point = math.Max(point, math.Abs(math.Log(pa/pb)))
		lower = math.Max(lower, math.Log((pa-sa)/(pb+sb)))
		lower = math.Max(lower, math.Log((pb-sb)/(pa+sa)))
	}
	return lower, point
}

// The whole path — contribution bounding in the backend SQL, sensitivity,
// noise — must keep its promise on neighbouring databases. Person 1 has
// three rows; the policy bounds them to two. If bounding failed, COUNT
// would differ by 3 and the measured loss would reach 1.5ε. COUNT(DISTINCT
// pid), VAR_POP and MEDIAN (a DP quantile), a join on the privacy unit, a
// per-person derived table (also over a join), and per-group distinct counts and quantiles are
// audited the same way.
func TestPrivacyAuditCountAndSum(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical audit")
	}
	n := 12000
	if raceEnabled {
		n = 3000
	}
	const eps = 1.0
	d, dPrime := auditDB(t, false), auditDB(t, true)
	for _, tc := range []struct {
		name  string
		query string
		width float64
		// tight: the neighbours differ by the full sensitivity, so the
		// measured loss must come close to ε (the audit has power).
		tight bool
	}{
		{"count", "SELECT COUNT(*) FROM t", 1, true},
		{"sum", "SELECT SUM(x) FROM t", 100, true},
		{"count distinct units", "SELECT COUNT(DISTINCT pid) FROM t", 1, true},
		{"variance", "SELECT VAR_POP(x) FROM t", 25, false},
		{"median", "SELECT MEDIAN(x) FROM t", 1, false},
		// Person 1 has 3·1 join rows, bounded to 2·1.
		{"join on the privacy unit", "SELECT COUNT(*) FROM t JOIN u ON t.pid = u.pid", 1, true},
		// Person 1's row in the derived table is SUM over 2 sampled rows:
		// 200, the derived bound.
		{"per-person derived table", "SELECT SUM(s) FROM (SELECT pid, SUM(x) AS s FROM t GROUP BY pid) d", 100, true},
		// Over a join: person 1's 3·1 join rows are sampled to 2 before
		// the count, so n is at most 2, the derived bound.
		{"per-person derived table over a join", "SELECT SUM(n) FROM (SELECT t.pid, COUNT(*) AS n FROM t JOIN u ON t.pid = u.pid GROUP BY t.pid) d", 1, true},
		// Rows sampled per (person, group): distinct values and quantiles.
		{"count distinct per group", "SELECT g, COUNT(DISTINCT x) FROM t GROUP BY g ORDER BY g", 1, false},
		{"median per group", "SELECT g, MEDIAN(x) FROM t GROUP BY g ORDER BY g", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := sample(t, d, tc.query, n)
			b := sample(t, dPrime, tc.query, n)
			lower, point := privacyLossLowerBound(a, b, tc.width, n/40, 4)
			t.Logf("%s: measured privacy loss %.3f (lower bound %.3f), claimed ε=%g", tc.name, point, lower, eps)
			if lower > eps {
				t.Errorf("%s leaks more than ε=%g: privacy loss at least %.3f", tc.name, eps, lower)
			}
			// The audit must be able to see loss: the neighbours differ by
			// the full sensitivity, so the tails show nearly ε.
			if tc.tight && point < 0.6*eps {
				t.Errorf("%s: the audit measured only %.3f of ε=%g; it could not detect a leak", tc.name, point, eps)
			}
		})
	}
}

// Partition selection end to end: in the audit table every value of x is
// held by one person only, so each group exists in a database and not in its
// neighbour without that person. Such a group may be released with
// probability at most δ (1e-6 here); over thousands of answers of 20 groups
// none should appear. A threshold that ignored δ would release them at once.
func TestPrivacyAuditPartitionSelection(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical audit")
	}
	n := 2000
	if raceEnabled {
		n = 500
	}
	d := auditDB(t, false)
	led, err := ledger.Open("", ledger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	ctx := context.Background()
	eng, err := proxy.New(ctx, proxy.Config{Policy: auditPolicy(t), Backend: d, Ledger: led, Database: "main"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := eng.NewSession(ctx, "auditor", "main", parser.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Execute(ctx, "SET dp_cache = off"); err != nil {
		t.Fatal(err)
	}
	released := 0
	for i := 0; i < n; i++ {
		res, err := s.Execute(ctx, "SELECT x, COUNT(*) FROM t GROUP BY x")
		if err != nil {
			t.Fatal(err)
		}
		released += len(res.Rows)
	}
	// Expected: 20 groups × n answers × δ = 0.04 (for n = 2000).
	if released > 1 {
		t.Errorf("%d single-person groups released over %d answers; at δ = 1e-6 about %.2g were expected", released, n, 20*float64(n)*1e-6)
	}
}
