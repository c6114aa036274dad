package integration

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// DBAs set budgets in SQL; the ledger keeps them over the policy's values,
// records every change, and non-admins may not touch them.
func TestAdminBudgetStatements(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		dba := tg.session(t, "dba", "dba")
		user := tg.session(t, "budget3", "budget3") // role "small": ε 3, at most 1 per query
		if me := mysqlError(t, user, "SET PRIVACY BUDGET FOR USER budget3 EPSILON 100"); me.Number != 1227 {
			t.Errorf("a non-admin set a budget: %v", me)
		}
		mustExec(t, dba, "SET PRIVACY BUDGET FOR USER budget3 EPSILON 1.5")
		mustExec(t, user, "SET dp_epsilon = 1")
		mustExec(t, user, "SET dp_cache = off")
		queryRows(t, user, "SELECT COUNT(*) FROM adult")
		me := mysqlError(t, user, "SELECT COUNT(*) FROM adult")
		if !strings.Contains(me.Message, "budget exceeded") {
			t.Errorf("the SQL-set budget of 1.5 was not enforced: %v", me)
		}
		_, rows := queryRows(t, dba, "SHOW PRIVACY BUDGET FOR USER budget3")
		if len(rows) != 1 || num(t, rows[0][3]) != 1.5 || num(t, rows[0][2]) != 1 {
			t.Errorf("SHOW PRIVACY BUDGET FOR USER: %v", rows)
		}
		mustExec(t, dba, "RESET PRIVACY BUDGET FOR USER budget3")
		if eps, _ := budget(t, user); eps != 0 {
			t.Errorf("after RESET the user has spent %v", eps)
		}
		mustExec(t, dba, "SET PRIVACY BUDGET FOR ROLE small MAX EPSILON PER QUERY 0.5")
		if me := mysqlError(t, user, "SELECT COUNT(*) FROM adult"); me.Number != 1231 {
			t.Errorf("the SQL-set per-query maximum was not enforced: %v", me)
		}
		cols, rows := queryRows(t, dba, "SHOW PRIVACY LEDGER FOR USER budget3 LIMIT 10")
		kinds := map[string]int{}
		for _, r := range rows {
			kinds[r[1]]++
		}
		if cols[1] != "kind" || kinds["charge"] != 1 || kinds["budget"] != 1 || kinds["reset"] != 1 {
			t.Errorf("the audit trail of budget3: %v", rows)
		}
		_, all := queryRows(t, dba, "SHOW PRIVACY BUDGETS")
		if len(all) < len(tg.pol.Users) {
			t.Errorf("SHOW PRIVACY BUDGETS lists %d rows for %d users", len(all), len(tg.pol.Users))
		}
		if me := mysqlError(t, user, "SHOW PRIVACY BUDGETS"); me.Number != 1227 {
			t.Errorf("a non-admin listed every budget: %v", me)
		}
		mustExec(t, dba, "SET PRIVACY BUDGET FOR ROLE small MAX EPSILON PER QUERY 1")
	})
}

// 64 sessions of one user hammer queries at once: the total charged never
// exceeds the budget, every answer was charged, refused queries charge
// nothing.
func TestConcurrentSessionsNeverOverspend(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		dba := tg.session(t, "dba", "dba")
		// 40 answers fit by basic composition; zCDP composition (the
		// ledger takes the tighter of the two) admits a few more.
		const user, budgetEps = "restart", 2.0
		mustExec(t, dba, "SET PRIVACY BUDGET FOR USER restart EPSILON 2")
		db := tg.connect(t, user, user)
		db.SetMaxOpenConns(64)
		var answered, refused atomic.Int64
		var wg sync.WaitGroup
		for i := 0; i < 64; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := context.Background()
				c, err := db.Conn(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				defer c.Close()
				if _, err := c.ExecContext(ctx, "SET dp_cache = off"); err != nil {
					t.Error(err)
					return
				}
				if _, err := c.ExecContext(ctx, "SET dp_epsilon = 0.05"); err != nil {
					t.Error(err)
					return
				}
				for j := 0; j < 3; j++ {
					var n sql.NullInt64
					err := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM adult").Scan(&n)
					switch {
					case err == nil:
						answered.Add(1)
					case strings.Contains(err.Error(), "budget exceeded"):
						refused.Add(1)
					default:
						t.Error(err)
					}
				}
			}()
		}
		wg.Wait()
		c := tg.session(t, user, user)
		_, rows := queryRows(t, c, "SHOW PRIVACY BUDGET")
		spent, charges := num(t, rows[0][2]), num(t, rows[0][10])
		n := answered.Load()
		if spent > budgetEps+1e-9 || float64(n) != charges || n < 40 || n+refused.Load() != 64*3 {
			t.Errorf("%d answers, %d refusals, %v charges; spent %v of %v", n, refused.Load(), charges, spent, budgetEps)
		}
		t.Logf("%d answers at ε=0.05 within ε=2 (basic composition alone: 40); spent %v", n, spent)
	})
}

// Repeating a statement returns the answer already released, at no new
// cost (post-processing), also after a restart; a different literal, ε or
// dp_cache = off means a new answer.
func TestRepeatsAreFree(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		c := tg.session(t, "tester", testerPassword)
		// charges is the number of answers charged to the session's user.
		charges := func() float64 {
			_, rows := queryRows(t, c, "SHOW PRIVACY BUDGET")
			return num(t, rows[0][10])
		}
		mustExec(t, c, "SET dp_epsilon = 0.3")
		q := "SELECT COUNT(*), AVG(age) FROM adult WHERE hours_per_week > 41"
		_, first := queryRows(t, c, q)
		before := charges()
		_, again := queryRows(t, c, q)
		if again[0][0] != first[0][0] || again[0][1] != first[0][1] || charges() != before {
			t.Errorf("a repeat gave %v (first %v) and was charged", again, first)
		}
		queryRows(t, c, "SELECT COUNT(*), AVG(age) FROM adult WHERE hours_per_week > 42")
		if n := charges(); n != before+1 {
			t.Errorf("another literal made %v charges, want 1", n-before)
		}
		mustExec(t, c, "SET dp_cache = off")
		queryRows(t, c, q)
		if n := charges(); n != before+2 {
			t.Errorf("with dp_cache = off a repeat was not charged")
		}
	})
}
