package proxy_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/backend"
	"github.com/dpproxy/dpproxy/ledger"
	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/proxy"
)

// chargeSession is a session over auditDB's table t with its own in-memory
// ledger and the given response quantum.
func chargeSession(t *testing.T, b *backend.Backend, quantum time.Duration) (*proxy.Session, ledger.Store) {
	t.Helper()
	led, err := ledger.Open("", ledger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { led.Close() })
	pol := auditPolicy(t)
	pol.Limits.ResponseQuantum = policy.Duration{Duration: quantum}
	ctx := context.Background()
	eng, err := proxy.New(ctx, proxy.Config{Policy: pol, Backend: b, Ledger: led, Database: "main"})
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
	return s, led
}

func spentBy(t *testing.T, led ledger.Store) float64 {
	t.Helper()
	sp, err := led.UserSpent(context.Background(), "auditor")
	if err != nil {
		t.Fatal(err)
	}
	return sp.Epsilon
}

// A failure after the charge keeps the charge and reaches the client as one
// generic message: the backend's text (in a real attack, a row's value quoted
// in a cast error) never does. Here the statement outlives its deadline while
// the backend reads the rows.
func TestFailureAfterTheChargeIsGenericAndCharged(t *testing.T) {
	b := auditDB(t, false)
	// Enough rows that the bounded SQL takes far longer than the deadline.
	if _, err := b.DB.Exec(`INSERT INTO t SELECT 100 + value % 50000, value % 100, 0
		FROM (WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM n WHERE value < 200000) SELECT value FROM n)`); err != nil {
		t.Fatal(err)
	}
	s, led := chargeSession(t, b, -1)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := s.Execute(ctx, "SELECT SUM(x), AVG(x), COUNT(*) FROM t")
	var pe *proxy.Error
	if !errors.As(err, &pe) || pe.Code != proxy.CodeBackend {
		t.Fatalf("want the generic failure after the charge, got %v", err)
	}
	if strings.Contains(pe.Msg, "interrupt") || strings.Contains(pe.Msg, "deadline") || !strings.Contains(pe.Msg, "incident") || !strings.Contains(pe.Msg, "charge stands") {
		t.Errorf("the message after the charge: %q", pe.Msg)
	}
	if got := spentBy(t, led); got != 1 {
		t.Errorf("spent ε=%v after a failure after the charge, want 1 (no refund)", got)
	}
}

// What the backend says when it prepares dpproxy's SQL (a missing table or
// column, a type it will not compare) depends on the statement and the
// schema only: it is told, before the charge, and costs nothing.
func TestSchemaErrorsAreFoundBeforeTheCharge(t *testing.T) {
	b := auditDB(t, false)
	s, led := chargeSession(t, b, -1)
	// The engine read t's columns at start; the table now goes away.
	if _, err := b.DB.Exec("DROP TABLE t"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Execute(context.Background(), "SELECT COUNT(*) FROM t")
	var pe *proxy.Error
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "nothing was charged") || !strings.Contains(pe.Msg, "no such table") {
		t.Fatalf("want the backend's preparing error, free, got %v", err)
	}
	if got := spentBy(t, led); got != 0 {
		t.Errorf("spent ε=%v for a statement the backend could not prepare", got)
	}
}

// An unavailable backend is found before the charge: nothing is spent.
func TestUnavailableBackendIsNotCharged(t *testing.T) {
	b := auditDB(t, false)
	s, led := chargeSession(t, b, -1)
	b.DB.Close()
	_, err := s.Execute(context.Background(), "SELECT COUNT(*) FROM t")
	var pe *proxy.Error
	if !errors.As(err, &pe) || pe.Code != proxy.CodeBackend || !strings.Contains(pe.Msg, "nothing was charged") {
		t.Fatalf("want 'unavailable, nothing charged', got %v", err)
	}
	if got := spentBy(t, led); got != 0 {
		t.Errorf("spent ε=%v with the backend gone before the charge", got)
	}
}

// The reply to a charged statement leaves on a multiple of the quantum after
// the charge, answer or failure alike.
func TestResponseQuantum(t *testing.T) {
	b := auditDB(t, false)
	const q = 150 * time.Millisecond
	s, _ := chargeSession(t, b, q)
	for _, stmt := range []string{"SELECT COUNT(*) FROM t", "SELECT SUM(x) FROM t WHERE g = 0"} {
		start := time.Now()
		if _, err := s.Execute(context.Background(), stmt); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d < q {
			t.Errorf("%s answered after %v, before the quantum of %v", stmt, d, q)
		}
	}
}

// A refusal found in HAVING or ORDER BY costs nothing: it is found before
// the charge, whatever the noisy values would have been.
func TestPostProcessingRefusalsAreFree(t *testing.T) {
	b := auditDB(t, false)
	s, led := chargeSession(t, b, -1)
	for _, stmt := range []string{
		"SELECT COUNT(*) FROM t HAVING SLEEP(2) = 0",
		"SELECT COUNT(*) AS n FROM t HAVING CASE WHEN n > 1000000 THEN BENCHMARK(1, 1) ELSE 1 END = 1",
		"SELECT COUNT(*) FROM t ORDER BY LOAD_FILE('/etc/passwd')",
		"SELECT COUNT(*) FROM t ORDER BY 3",
	} {
		if _, err := s.Execute(context.Background(), stmt); err == nil {
			t.Errorf("%s was answered", stmt)
		}
	}
	if got := spentBy(t, led); got != 0 {
		t.Errorf("refusals in HAVING / ORDER BY spent ε=%v", got)
	}
}

// SET is atomic, and ε has a floor.
func TestSetIsAtomicAndEpsilonHasAFloor(t *testing.T) {
	b := auditDB(t, false)
	s, _ := chargeSession(t, b, -1)
	ctx := context.Background()
	if _, err := s.Execute(ctx, "SET dp_epsilon = 2, dp_epsilon = 'bad'"); err == nil {
		t.Fatal("SET dp_epsilon = 'bad' was accepted")
	}
	res, err := s.Execute(ctx, "SELECT @@dp_epsilon")
	if err != nil || res.Rows[0][0] != 1.0 {
		t.Errorf("after a failed SET, dp_epsilon = %v (%v), want the default 1", res, err)
	}
	for _, eps := range []string{"5e-324", "0.0001"} {
		if _, err := s.Execute(ctx, "SET dp_epsilon = "+eps); err == nil {
			t.Errorf("SET dp_epsilon = %s was accepted under the floor of %g", eps, policy.DefaultMinEpsilonPerQuery)
		}
	}
	if _, err := s.Execute(ctx, "SET @big = REPEAT('x', 100000)"); err == nil {
		// REPEAT may be unknown to the evaluator; a literal then.
		t.Log("REPEAT evaluated")
	}
	if _, err := s.Execute(ctx, "SET @big = '"+strings.Repeat("x", 70_000)+"'"); err == nil {
		t.Error("a 70 kB user variable was accepted")
	}
}

// Prepared parameters: '0' and 0 are different answers, and NaN is refused.
func TestAnswerCacheKeysParameterTypes(t *testing.T) {
	b := auditDB(t, false)
	s, led := chargeSession(t, b, -1)
	ctx := context.Background()
	if _, err := s.Execute(ctx, "SET dp_cache = on"); err != nil {
		t.Fatal(err)
	}
	p, err := s.Prepare(ctx, "SELECT COUNT(*) FROM t WHERE x > ?")
	if err != nil {
		t.Fatal(err)
	}
	for i, arg := range []proxy.Value{int64(0), "0", int64(0), "0"} {
		if _, err := s.ExecutePrepared(ctx, p, []proxy.Value{arg}); err != nil {
			t.Fatal(err)
		}
		// 0 and '0' are two answers, each charged once; repeats are free.
		want := float64(min(i+1, 2))
		if got := spentBy(t, led); got != want {
			t.Errorf("after %d executions (last %#v) spent ε=%v, want %v", i+1, arg, got, want)
		}
	}
	if _, err := s.ExecutePrepared(ctx, p, []proxy.Value{nan()}); err == nil {
		t.Error("a NaN parameter was accepted")
	}
}

func nan() float64 { var z float64; return z / z }
