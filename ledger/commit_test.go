package ledger

import (
	"context"
	"errors"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// One change that cannot be applied (here: a user whose totals record is
// corrupt) must fail alone, not take the other changes of its group with it.
func TestGroupIsolatesAFailure(t *testing.T) {
	l := openTemp(t)
	err := l.db.Update(func(txn *badger.Txn) error { return txn.Set(keyUserTotals("mallory"), []byte("{not json")) })
	if err != nil {
		t.Fatal(err)
	}
	lim := Limits{User: Budget{Epsilon: 10, Delta: 1}}
	users := []string{"alice", "bob", "mallory", "carol", "dave"}
	group := make([]*op, len(users))
	for i, u := range users {
		id, err := l.newID()
		if err != nil {
			t.Fatal(err)
		}
		c := Charge{User: u, Epsilon: 1}
		group[i] = &op{ctx: context.Background(), done: make(chan error, 1),
			apply: func(txn *badger.Txn) (error, error) { return chargeTxn(txn, id, c, lim) }}
	}
	l.commit(group)
	for i, u := range users {
		err := <-group[i].done
		if u == "mallory" {
			if err == nil {
				t.Errorf("charge against a corrupt totals record succeeded")
			}
			continue
		}
		if err != nil {
			t.Errorf("%s's charge failed with its group: %v", u, err)
		}
		sameSums(t, u, mustSpent(t, l, u), Spent{Epsilon: 1, Rho: 0.5, Charges: 1})
	}
	if n := len(mustEntries(t, l, "", 0)); n != 4 {
		t.Errorf("trail has %d entries, want the 4 good charges", n)
	}
}

// Charges within one group see each other's totals: a group holding more
// charges than the budget allows must refuse the excess.
func TestGroupChargesSeeEachOther(t *testing.T) {
	l := openTemp(t)
	lim := Limits{User: Budget{Epsilon: 3, Delta: 1}}
	group := make([]*op, 5)
	for i := range group {
		id, _ := l.newID()
		group[i] = &op{ctx: context.Background(), done: make(chan error, 1),
			apply: func(txn *badger.Txn) (error, error) {
				return chargeTxn(txn, id, Charge{User: "alice", Epsilon: 1}, lim)
			}}
	}
	l.commit(group)
	for i, o := range group {
		err := <-o.done
		if i < 3 && err != nil {
			t.Errorf("charge %d within budget: %v", i, err)
		}
		if i >= 3 && !errors.Is(err, ErrBudgetExceeded) {
			t.Errorf("charge %d over budget returned %v", i, err)
		}
	}
	sameSums(t, "alice", mustSpent(t, l, "alice"), Spent{Epsilon: 3, Rho: 1.5, Charges: 3})
}

func TestClosedLedger(t *testing.T) {
	l, err := Open("", Options{InMemory: true, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, err = l.Charge(context.Background(), Charge{User: "u", Epsilon: 1}, Limits{User: Budget{10, 0}})
	if !errors.Is(err, ErrClosed) {
		t.Errorf("Charge on a closed ledger returned %v, want ErrClosed", err)
	}
}
