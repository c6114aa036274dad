package ledger

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The crash test re-executes the test binary as a child that charges (and
// sometimes refunds) in a loop from several goroutines and prints every
// receipt it got back, then SIGKILLs it at a random moment. Whatever the
// child printed was acknowledged, as an answer would have been released: it
// must be in the reopened ledger, and the totals must equal the entries and
// stay within every budget.

const crashChildEnv = "DPPROXY_LEDGER_CRASH_CHILD"

var (
	crashUser = Budget{Epsilon: 6, Delta: 1e-5}
	crashPool = Budget{Epsilon: 15, Delta: 1e-5}
)

func crashCharge(g, i int) Charge {
	c := Charge{User: fmt.Sprintf("u%d", g%4), Role: "analyst", Statement: "SELECT COUNT(*) FROM t",
		Mechanism: "laplace", Epsilon: 0.05}
	if i%3 == 0 {
		c.Mechanism, c.Epsilon, c.Delta, c.Rho, c.DeltaInRho = "gaussian", 0.1, 1e-7, 0.002, 1e-7
	}
	return c
}

// TestCrashChild is the child; it does nothing unless started by
// TestCrashSafety.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("only runs as the child of TestCrashSafety")
	}
	l, err := Open(dir, Options{Logger: quietLogger()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	pool := crashPool
	lim := Limits{User: crashUser, Pool: &pool}
	var mu sync.Mutex
	say := func(kind, id string) {
		mu.Lock()
		defer mu.Unlock()
		// os.Stdout is unbuffered: the line is in the pipe when this returns.
		fmt.Fprintf(os.Stdout, "%s %s\n", kind, id)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				r, err := l.Charge(context.Background(), crashCharge(g, i), lim)
				if errors.Is(err, ErrBudgetExceeded) {
					time.Sleep(time.Millisecond)
					continue
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(4)
				}
				say("C", r.ID)
				if i%5 == 4 {
					if err := l.Refund(context.Background(), r.ID); err != nil {
						fmt.Fprintln(os.Stderr, err)
						os.Exit(5)
					}
					say("R", r.ID)
				}
			}
		})
	}
	wg.Wait()
}

func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a child process 20 times")
	}
	dir := filepath.Join(t.TempDir(), "ledger")
	charged, refunded := map[string]bool{}, map[string]bool{}
	for round := range 20 {
		var out, errOut bytes.Buffer
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Let the child open the ledger (slower under -race) and charge for
		// a random while: 300 to 900 ms.
		time.Sleep(jitter(600 * time.Millisecond)) // uniform in [300, 900) ms
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: the child ended with %v before it was killed:\n%s", round, err, errOut.String())
		}
		sc := bufio.NewScanner(&out)
		for sc.Scan() {
			kind, id, ok := strings.Cut(sc.Text(), " ")
			if !ok || len(id) != 2*idLen {
				continue // a line cut by the kill
			}
			if kind == "C" {
				charged[id] = true
			} else {
				refunded[id] = true
			}
		}
		checkCrashedLedger(t, round, dir, charged, refunded)
	}
	t.Logf("%d charges and %d refunds acknowledged over 20 kills", len(charged), len(refunded))
	if len(charged) < 100 {
		t.Errorf("the children acknowledged only %d charges in 20 rounds", len(charged))
	}
}

func checkCrashedLedger(t *testing.T, round int, dir string, charged, refunded map[string]bool) {
	t.Helper()
	// A read-only open of a killed ledger says what to do.
	if ro, err := Open(dir, Options{Logger: quietLogger(), ReadOnly: true}); err == nil {
		ro.Close()
	} else if !strings.Contains(err.Error(), "opened once read-write") {
		t.Fatalf("round %d: read-only open after SIGKILL: %v", round, err)
	}
	l, err := Open(dir, Options{Logger: quietLogger()})
	if err != nil {
		t.Fatalf("round %d: reopen after SIGKILL: %v", round, err)
	}
	defer l.Close()
	ctx := context.Background()
	byID := map[string]Entry{}
	sums := map[string]*Spent{} // from the entries: users, and "pool"
	add := func(k string, e Entry) {
		s := sums[k]
		if s == nil {
			s = &Spent{}
			sums[k] = s
		}
		s.Epsilon += e.Epsilon
		s.Rho += costOf(e.Charge).rho
		s.Charges++
	}
	err = l.Walk(ctx, func(e Entry) error {
		byID[e.ID] = e
		if e.Kind == KindCharge && e.Outcome == OutcomeCharged {
			add(e.User, e)
			if e.Pooled {
				add("pool", e)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for id := range charged {
		if e, ok := byID[id]; !ok || e.Kind != KindCharge {
			t.Fatalf("round %d: acknowledged charge %s is not in the ledger", round, id)
		}
	}
	for id := range refunded {
		if byID[id].Outcome != OutcomeRefunded {
			t.Fatalf("round %d: acknowledged refund of %s is not in the ledger", round, id)
		}
	}
	users, pools, err := l.Totals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, got Spent, total Budget) {
		want := sums[name]
		if want == nil {
			want = &Spent{}
		}
		if got.Charges != want.Charges || math.Abs(got.Epsilon-want.Epsilon) > 1e-9 || math.Abs(got.Rho-want.Rho) > 1e-9 {
			t.Fatalf("round %d: %s totals %+v differ from its entries %+v", round, name, got, *want)
		}
		withinBudget(t, fmt.Sprintf("round %d: %s", round, name), got, total)
	}
	for name, s := range users {
		check(name, s, crashUser)
	}
	check("pool", pools["analyst"], crashPool)
	if round == 19 {
		t.Logf("after the last round: pool %s", pools["analyst"].Account(crashPool))
	}
}
