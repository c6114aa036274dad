package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Issue 11's TRAIN pair, on every backend: a memory cap of one row
// (max_bytes = 5: age as float32 and the label) must not fail exactly when
// person 10 matches. Person 11 always matches, so the training rows exceed
// the cap only when person 10 does too. Both statements must succeed with
// the same columns and the same charge.
func TestTrainMemoryCapPairSameOutcome(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		c := tg.session(t, "tester", testerPassword)
		income := num(t, tg.exact(t, "SELECT income FROM pums_person WHERE pid = 10")[0][0])
		type outcome struct {
			cols     string
			err      string
			eps, del float64
		}
		var got []outcome
		for i, cut := range []float64{income - 1, income + 1} {
			name := fmt.Sprintf("cap_%s_%d", tg.name, i)
			q := fmt.Sprintf("TRAIN PRIVATE LOGREG %s ON (SELECT age, sex FROM pums_person WHERE pid = 11 OR (pid = 10 AND income > %v)) LABEL sex = 1 WITH (epsilon = 0.001, max_bytes = 5)", name, cut)
			// Σε (basic composition): the difference is this charge
			// exactly, whatever the user spent before.
			basic := spentOn(t, c)
			eps0, del0 := basic(), 0.0
			_, del0 = budget(t, c)
			var o outcome
			rows, err := c.QueryContext(context.Background(), q)
			if err != nil {
				o.err = err.Error()
			} else {
				cols, _ := rows.Columns()
				o.cols = strings.Join(cols, ",")
				for rows.Next() {
				}
				if err := rows.Err(); err != nil {
					o.err = err.Error()
				}
				rows.Close()
			}
			eps1 := basic()
			_, del1 := budget(t, c)
			o.eps, o.del = eps1-eps0, del1-del0
			got = append(got, o)
			mustExec(t, c, "DROP MODEL "+name)
		}
		if got[0] != got[1] {
			t.Errorf("the pair differs: person 10 matching %+v, not matching %+v", got[0], got[1])
		}
		// The tester has spent ~10⁶ ε in other tests: the difference of two
		// such totals carries a few ulps of rounding (2e-9 here).
		if got[0].err != "" || got[0].eps < 0.001*(1-1e-5) || got[0].eps > 0.001*(1+1e-5) {
			t.Errorf("want both to succeed at ε = 0.001: %+v", got[0])
		}
	})
}

// An option that cannot be honoured is refused before the charge.
func TestTrainOptionsRefusedFree(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		c := tg.session(t, "tester", testerPassword)
		before, _ := budget(t, c)
		for opt, want := range map[string]string{
			"components = 100000000":      "components must be",
			"kernel = 'rbf', gamma = 0":   "gamma must be",
			"epsilon = 0.000001":          "epsilon must be at least",
			"max_bytes = 4":               "max_bytes must be at least",
			"max_bytes = 1000000000000":   "max_bytes must be",
			"components = 10, gamma = -1": "gamma must be",
		} {
			me := mysqlError(t, c, "TRAIN PRIVATE LOGREG bad_"+tg.name+" ON (SELECT age, sex FROM pums_person) LABEL sex = 1 WITH ("+opt+")")
			if !strings.Contains(me.Message, want) {
				t.Errorf("WITH (%s): %v, want a refusal about %q", opt, me, want)
			}
		}
		if after, _ := budget(t, c); after != before {
			t.Errorf("refused TRAINs charged ε = %v", after-before)
		}
	})
}

// Two TRAINs of one name at once: exactly one succeeds, the other is
// refused before it is charged.
func TestTrainConcurrentSameModelName(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		name := "race_" + tg.name
		probe := tg.session(t, "tester", testerPassword)
		before, _ := budget(t, probe)
		var errs [2]error
		var wg2 sync.WaitGroup
		start2 := make(chan struct{})
		for i := range 2 {
			wg2.Add(1)
			go func() {
				defer wg2.Done()
				<-start2
				c := tg.session(t, "tester", testerPassword)
				rows, err := c.QueryContext(context.Background(), "TRAIN PRIVATE LOGREG "+name+" ON (SELECT age, sex FROM pums_person) LABEL sex = 1 WITH (epsilon = 1)")
				if err == nil {
					for rows.Next() {
					}
					err = rows.Err()
					rows.Close()
				}
				errs[i] = err
			}()
		}
		close(start2)
		wg2.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case !strings.Contains(err.Error(), "exists"):
				t.Errorf("the loser's error: %v", err)
			}
		}
		if ok != 1 {
			t.Fatalf("%d of two concurrent TRAINs of %s succeeded: %v", ok, name, errs)
		}
		if after, _ := budget(t, probe); after-before < 1-1e-9 || after-before > 1+1e-9 {
			t.Errorf("two concurrent TRAINs charged ε = %v, want 1 (the loser refused before its charge)", after-before)
		}
		mustExec(t, probe, "DROP MODEL "+name)
	})
}

// A model is read by its owner and by admins only; its name stays taken for
// everyone.
func TestTrainModelReadAccess(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		owner := tg.session(t, "tester", testerPassword)
		other := tg.session(t, "analyst", "analyst")
		admin := tg.session(t, "dba", "dba")
		name := "owned_" + tg.name
		queryRows(t, owner, "TRAIN PRIVATE LOGREG "+name+" ON (SELECT age, sex FROM pums_person) LABEL sex = 1 WITH (epsilon = 1)")
		has := func(rows [][]string) bool {
			for _, r := range rows {
				if r[0] == name {
					return true
				}
			}
			return false
		}
		if _, rows := queryRows(t, owner, "SHOW MODELS"); !has(rows) {
			t.Errorf("the owner's SHOW MODELS lacks %s", name)
		}
		if _, rows := queryRows(t, admin, "SHOW MODELS"); !has(rows) {
			t.Errorf("the admin's SHOW MODELS lacks %s", name)
		}
		if _, rows := queryRows(t, other, "SHOW MODELS"); has(rows) {
			t.Errorf("another user's SHOW MODELS lists %s", name)
		}
		spent, _ := budget(t, other)
		for _, q := range []string{"SHOW MODEL " + name, "EVALUATE MODEL " + name + " ON (SELECT age, sex FROM pums_person) LABEL sex = 1 WITH (epsilon = 1)", "DROP MODEL " + name} {
			if me := mysqlError(t, other, q); !strings.Contains(me.Message, "only") {
				t.Errorf("another user: %s: %v", q, me)
			}
		}
		if me := mysqlError(t, other, "TRAIN PRIVATE LOGREG "+name+" ON (SELECT age, sex FROM pums_person) LABEL sex = 1 WITH (epsilon = 1)"); !strings.Contains(me.Message, "exists") {
			t.Errorf("another user trained over the name: %v", me)
		}
		if after, _ := budget(t, other); after != spent {
			t.Errorf("another user's refused statements charged ε = %v", after-spent)
		}
		if _, rows := queryRows(t, admin, "SHOW MODEL "+name); len(rows) != 2 {
			t.Errorf("the admin's SHOW MODEL: %d rows", len(rows))
		}
		mustExec(t, owner, "DROP MODEL "+name)
	})
}
