package integration

import (
	"context"
	"database/sql"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func num(t testing.TB, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return f
}

// exact runs q on the backend directly: the true answer, for comparison.
func (tg *target) exact(t testing.TB, q string) [][]string {
	t.Helper()
	_, rows := queryRows(t, tg.direct, q)
	return rows
}

// budget returns the session user's (epsilon_spent, delta_spent).
func budget(t testing.TB, c *sql.Conn) (float64, float64) {
	t.Helper()
	cols, rows := queryRows(t, c, "SHOW PRIVACY BUDGET")
	if len(rows) != 1 || len(cols) < 6 || cols[2] != "epsilon_spent" || cols[5] != "delta_total" {
		t.Fatalf("SHOW PRIVACY BUDGET: got %v %v", cols, rows)
	}
	return num(t, rows[0][2]), num(t, rows[0][4])
}

// At a very large ε the noise is far below the tolerance, so the proxy's
// answer must match the exact one computed directly in the backend: this
// checks the rewrite (clamping, bounding, grouping) and the release path.
func TestAggregatesMatchBackendAtLargeEpsilon(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		c := tg.session(t, "tester", testerPassword)
		mustExec(t, c, "SET dp_epsilon = 1e5")

		_, rows := queryRows(t, c, "SELECT COUNT(*) AS n, SUM(age), AVG(hours_per_week) FROM adult WHERE age >= 30")
		want := tg.exact(t, "SELECT COUNT(*), SUM(age), AVG(hours_per_week) FROM adult WHERE age >= 30")
		if len(rows) != 1 {
			t.Fatalf("got %d rows", len(rows))
		}
		for i := range want[0] {
			if d := math.Abs(num(t, rows[0][i]) - num(t, want[0][i])); d > 0.5 {
				t.Errorf("column %d: proxy %s, exact %s", i, rows[0][i], want[0][i])
			}
		}
		if _, err := strconv.ParseInt(rows[0][0], 10, 64); err != nil {
			t.Errorf("COUNT must be released as an integer, got %q", rows[0][0])
		}

		// GROUP BY a public column: both values, in order, with arithmetic
		// over aggregates and an alias.
		_, rows = queryRows(t, c, "SELECT sex, COUNT(*) AS n, SUM(age)/COUNT(*) AS mean_age FROM adult GROUP BY sex ORDER BY sex")
		want = tg.exact(t, "SELECT sex, COUNT(*), AVG(age) FROM adult GROUP BY sex ORDER BY sex")
		if len(rows) != 2 || rows[0][0] != "Female" || rows[1][0] != "Male" {
			t.Fatalf("GROUP BY sex: got %v", rows)
		}
		for i := range rows {
			if num(t, rows[i][1]) != num(t, want[i][1]) || math.Abs(num(t, rows[i][2])-num(t, want[i][2])) > 0.01 {
				t.Errorf("group %s: proxy %v, exact %v", rows[i][0], rows[i], want[i])
			}
		}

		// PUMS has up to 4 rows per person; the policy allows 2. The
		// answer is the bounded count: between the distinct persons and
		// twice that.
		_, rows = queryRows(t, c, "SELECT COUNT(*) FROM pums")
		persons := num(t, tg.exact(t, "SELECT COUNT(DISTINCT pid) FROM pums")[0][0])
		all := num(t, tg.exact(t, "SELECT COUNT(*) FROM pums")[0][0])
		bounded := tg.exact(t, `SELECT SUM(CASE WHEN n > 2 THEN 2 ELSE n END) FROM (SELECT pid, COUNT(*) AS n FROM pums GROUP BY pid) per`)
		if got := num(t, rows[0][0]); got != num(t, bounded[0][0]) || got < persons || got >= all {
			t.Errorf("bounded COUNT(*) over pums: got %v, want %s (persons %v, rows %v)", got, bounded[0][0], persons, all)
		}

		// Public keys: every public value comes back, also empty groups.
		_, rows = queryRows(t, c, "SELECT race, COUNT(*) FROM adult WHERE race = 'Other' GROUP BY race")
		if len(rows) != 5 {
			t.Errorf("GROUP BY race should release all 5 public races, got %v", rows)
		}
		for _, r := range rows {
			if r[0] != "Other" && r[1] != "0" {
				t.Errorf("group %s should be empty, got %s", r[0], r[1])
			}
		}

		// HAVING, ORDER BY and LIMIT run on the noisy values.
		_, rows = queryRows(t, c, "SELECT education, COUNT(*) AS n FROM adult GROUP BY education HAVING n > 1000 ORDER BY n DESC LIMIT 3")
		want = tg.exact(t, "SELECT education, COUNT(*) AS n FROM adult GROUP BY education HAVING COUNT(*) > 1000 ORDER BY n DESC LIMIT 3")
		if len(rows) != 3 {
			t.Fatalf("HAVING/ORDER/LIMIT: got %v", rows)
		}
		for i := range rows {
			if rows[i][0] != want[i][0] {
				t.Errorf("row %d: proxy %v, exact %v", i, rows[i], want[i])
			}
		}
	})
}

// Grouping by a column without public values needs partition selection:
// only groups with enough distinct persons are released, never a group
// that does not exist.
func TestPartitionSelection(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		c := tg.session(t, "tester", testerPassword)
		mustExec(t, c, "SET dp_epsilon = 5")
		mustExec(t, c, "SET dp_delta = 1e-6")
		_, rows := queryRows(t, c, "SELECT hours_per_week, COUNT(*) FROM adult GROUP BY hours_per_week")
		exact := map[string]float64{}
		for _, r := range tg.exact(t, "SELECT hours_per_week, COUNT(*) FROM adult GROUP BY hours_per_week") {
			exact[r[0]] = num(t, r[1])
		}
		got := map[string]bool{}
		for _, r := range rows {
			got[r[0]] = true
			if _, ok := exact[r[0]]; !ok {
				t.Errorf("released group %s does not exist", r[0])
			}
		}
		if !got["40"] || !got["50"] {
			t.Errorf("the largest groups (40, 50 hours) must pass selection, got %d groups", len(rows))
		}
		if len(rows) >= len(exact) {
			t.Errorf("all %d groups released, including single-person ones", len(rows))
		}

		mustExec(t, c, "SET dp_delta = 0")
		if me := mysqlError(t, c, "SELECT hours_per_week, COUNT(*) FROM adult GROUP BY hours_per_week"); me.Number != 1227 || !strings.Contains(me.Message, "dp_delta") {
			t.Errorf("partition selection with δ=0: got %v", me)
		}
	})
}

// Everything that would reveal a row is refused with a clear error and
// costs nothing.
func TestRefusalsCostNothing(t *testing.T) {
	cases := []struct {
		sql    string
		number uint16
		reason string
	}{
		{"SELECT * FROM adult", 1227, "SELECT *"},
		{"SELECT age FROM adult", 1227, "neither aggregated nor a GROUP BY key"},
		{"SELECT age, COUNT(*) FROM adult", 1227, "neither aggregated"},
		{"SELECT pid, COUNT(*) FROM pums GROUP BY pid", 1227, "privacy unit"},
		{"SELECT SUM(workclass) FROM adult", 1227, "needs a public bound"},
		{"SELECT MIN(workclass) FROM adult", 1227, "needs a public bound"},
		{"SELECT DISTINCT sex FROM adult", 1227, "DISTINCT"},
		{"INSERT INTO adult (age) VALUES (1)", 1227, "read-only"},
		{"DELETE FROM adult", 1227, "read-only"},
		{"DROP TABLE adult", 1227, "read-only"},
		{"SELECT COUNT(*) FROM adult WHERE age > (SELECT AVG(age) FROM adult)", 1227, "subqueries"},
		{"SELECT COUNT(*) FROM adult; SELECT 1", 1235, "multi"},
		{"SELECT COUNT(*) FROM adult a JOIN pums p ON a.age = p.age", 1227, "joined"},
		{"SELECT COUNT(*) FROM nosuchtable", 1146, "doesn't exist"},
		{"SELECT COUNT(nosuchcolumn) FROM adult", 1054, "nosuchcolumn"},
		{"SELEKT 1", 1064, "syntax"},
		{"SELECT COUNT(*) FROM adult WHERE SLEEP(1) = 0", 1227, "SLEEP"},
	}
	forEach(t, func(t *testing.T, tg *target) {
		c := tg.session(t, "tester", testerPassword)
		eps0, delta0 := budget(t, c)
		for _, tc := range cases {
			me := mysqlError(t, c, tc.sql)
			if me.Number != tc.number || !strings.Contains(strings.ToLower(me.Message), strings.ToLower(tc.reason)) {
				t.Errorf("%s: got error %d %q, want %d mentioning %q", tc.sql, me.Number, me.Message, tc.number, tc.reason)
			}
		}
		if eps, delta := budget(t, c); eps != eps0 || delta != delta0 {
			t.Errorf("refused queries were charged: ε %v → %v, δ %v → %v", eps0, eps, delta0, delta)
		}
	})
}

// A user's budget is charged per answer, and a query that would overspend
// is refused with what is spent and left.
func TestBudgetIsChargedAndEnforced(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		c := tg.session(t, "budget1", "budget1")
		// Role "small": ε 3 in all, at most 1 per query.
		if me := mysqlError(t, c, "SET dp_epsilon = 1.5"); me.Number != 1231 {
			t.Errorf("ε over the per-query maximum: got %v", me)
		}
		mustExec(t, c, "SET dp_epsilon = 1")
		mustExec(t, c, "SET dp_cache = off") // each repeat is a new, charged answer
		for i := 0; i < 3; i++ {
			queryRows(t, c, "SELECT COUNT(*) FROM adult")
		}
		eps, _ := budget(t, c)
		if math.Abs(eps-3) > 1e-9 {
			t.Errorf("three queries at ε=1: spent %v", eps)
		}
		me := mysqlError(t, c, "SELECT COUNT(*) FROM adult")
		if me.SQLState != [5]byte{'D', 'P', '0', '0', '1'} || !strings.Contains(me.Message, "left") {
			t.Errorf("over budget: got %d %s %q", me.Number, me.SQLState, me.Message)
		}
		if eps2, _ := budget(t, c); eps2 != eps {
			t.Errorf("a refused query was charged: %v → %v", eps, eps2)
		}
		// Another user of the same role has their own allowance.
		c2 := tg.session(t, "budget2", "budget2")
		mustExec(t, c2, "SET dp_epsilon = 0.5")
		queryRows(t, c2, "SELECT COUNT(*) FROM adult")
	})
}

// Prepared statements (COM_STMT_PREPARE / EXECUTE) with arguments.
func TestPreparedStatements(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		db := tg.connect(t, "tester", testerPassword)
		ctx := context.Background()
		stmt, err := db.PrepareContext(ctx, "SELECT COUNT(*) FROM adult WHERE age > ? AND sex = ?")
		if err != nil {
			t.Fatal(err)
		}
		defer stmt.Close()
		var n int64
		if err := stmt.QueryRowContext(ctx, 40, "Female").Scan(&n); err != nil {
			t.Fatal(err)
		}
		want := num(t, tg.exact(t, "SELECT COUNT(*) FROM adult WHERE age > 40 AND sex = 'Female'")[0][0])
		// ε=1 (the default): Laplace noise of scale 1; 40 is > 27 scales.
		if math.Abs(float64(n)-want) > 40 {
			t.Errorf("prepared COUNT: got %d, exact %v", n, want)
		}
		// Interpolated (client-side) parameters take the text path.
		db2 := tg.connect(t, "tester", testerPassword, "interpolateParams=true")
		if err := db2.QueryRowContext(ctx, "SELECT COUNT(*) FROM adult WHERE age > ?", 40).Scan(&n); err != nil {
			t.Fatal(err)
		}
	})
}

// Session statements and catalog reads clients send on connect.
func TestCatalogAndSession(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		c := tg.session(t, "tester", testerPassword)
		_, rows := queryRows(t, c, "select @@version_comment limit 1")
		if len(rows) != 1 || !strings.Contains(rows[0][0], "dpproxy") {
			t.Errorf("@@version_comment: %v", rows)
		}
		_, rows = queryRows(t, c, "SELECT DATABASE()")
		if rows[0][0] != tg.db {
			t.Errorf("DATABASE(): %v", rows)
		}
		_, rows = queryRows(t, c, "SHOW TABLES")
		names := map[string]bool{}
		for _, r := range rows {
			names[r[0]] = true
		}
		if !names["adult"] || !names["pums"] {
			t.Errorf("SHOW TABLES: %v", rows)
		}
		_, rows = queryRows(t, c, "DESCRIBE adult")
		if len(rows) != 15 || rows[0][0] != "age" {
			t.Errorf("DESCRIBE adult: %v", rows)
		}
		_, rows = queryRows(t, c, "SELECT TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME")
		for _, r := range rows {
			if r[1] != "NULL" {
				t.Errorf("information_schema.TABLES.TABLE_ROWS must be hidden, got %v", r)
			}
		}
		mustExec(t, c, "SET NAMES utf8mb4")
		mustExec(t, c, "SET autocommit = 1")
		mustExec(t, c, "SET dp_mechanism = 'gaussian'")
		mustExec(t, c, "SET dp_delta = 1e-7")
		_, rows = queryRows(t, c, "SELECT @@dp_mechanism, @@dp_delta")
		if rows[0][0] != "gaussian" {
			t.Errorf("@@dp_mechanism: %v", rows)
		}
		_, rows = queryRows(t, c, "SELECT COUNT(*) FROM adult")
		if _, err := strconv.ParseInt(rows[0][0], 10, 64); err != nil {
			t.Errorf("Gaussian COUNT: %v", rows)
		}
		if me := mysqlError(t, c, "SET dp_mechanism = 'exponential'"); me.Number != 1231 {
			t.Errorf("bad mechanism: %v", me)
		}
		if me := mysqlError(t, c, "SHOW PROCESSLIST"); me.Number != 1227 {
			t.Errorf("SHOW PROCESSLIST: %v", me)
		}
	})
}

// A wrong password is error 1045.
func TestWrongPassword(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		db := tg.connect(t, "analyst", "wrong")
		err := db.PingContext(context.Background())
		me, ok := err.(*mysql.MySQLError)
		if !ok || me.Number != 1045 {
			t.Errorf("wrong password: got %v", err)
		}
	})
}

// The analyst's SQL beyond plain columns: expressions inside aggregates,
// VAR and STDDEV, COUNT(DISTINCT), GROUP BY expressions — each checked at a
// large ε against the exact answer computed in the backend.
func TestRicherAggregatesMatchBackend(t *testing.T) {
	cases := []struct{ proxy, exact string }{
		{"SELECT SUM(CASE WHEN age > 60 THEN 1 ELSE 0 END) FROM adult",
			"SELECT SUM(CASE WHEN age > 60 THEN 1 ELSE 0 END) FROM adult"},
		{"SELECT AVG(capital_gain / 1000) FROM adult", "SELECT AVG(capital_gain / 1000.0) FROM adult"},
		{"SELECT SUM(hours_per_week * 52) FROM adult WHERE sex = 'Female'", "SELECT SUM(hours_per_week * 52) FROM adult WHERE sex = 'Female'"},
		{"SELECT VAR_POP(age) FROM adult", "SELECT AVG(age * age) - AVG(age) * AVG(age) FROM adult"},
		{"SELECT STDDEV_POP(hours_per_week) FROM adult", "SELECT SQRT(AVG(hours_per_week * hours_per_week) - AVG(hours_per_week) * AVG(hours_per_week)) FROM adult"},
		{"SELECT COUNT(DISTINCT pid) FROM pums", "SELECT COUNT(DISTINCT pid) FROM pums"},
		{"SELECT COUNT(DISTINCT education) FROM adult", "SELECT COUNT(DISTINCT education) FROM adult"},
		{"SELECT FLOOR(age / 10) * 10 AS decade, COUNT(*) FROM adult GROUP BY decade ORDER BY decade",
			"SELECT FLOOR(age / 10) * 10 AS decade, COUNT(*) FROM adult GROUP BY FLOOR(age / 10) * 10 ORDER BY decade"},
		{"SELECT CASE WHEN age >= 65 THEN 'retired' ELSE 'working' END AS stage, AVG(hours_per_week) FROM adult GROUP BY 1 ORDER BY 1",
			"SELECT CASE WHEN age >= 65 THEN 'retired' ELSE 'working' END AS stage, AVG(hours_per_week) FROM adult GROUP BY CASE WHEN age >= 65 THEN 'retired' ELSE 'working' END ORDER BY 1"},
	}
	forEach(t, func(t *testing.T, tg *target) {
		c := tg.session(t, "tester", testerPassword)
		mustExec(t, c, "SET dp_epsilon = 1e5")
		for _, tc := range cases {
			_, got := queryRows(t, c, tc.proxy)
			want := tg.exact(t, tc.exact)
			if len(got) != len(want) {
				t.Errorf("%s: %d rows, exact %d:\n%v\n%v", tc.proxy, len(got), len(want), got, want)
				continue
			}
			for i := range want {
				for j := range want[i] {
					g, w := got[i][j], want[i][j]
					gf, gerr := strconv.ParseFloat(g, 64)
					wf, werr := strconv.ParseFloat(w, 64)
					if gerr != nil || werr != nil {
						if g != w {
							t.Errorf("%s: row %d col %d: proxy %q, exact %q", tc.proxy, i, j, g, w)
						}
						continue
					}
					if math.Abs(gf-wf) > 0.02*math.Max(1, math.Abs(wf)) {
						t.Errorf("%s: row %d col %d: proxy %v, exact %v", tc.proxy, i, j, gf, wf)
					}
				}
			}
		}
	})
}

// EXPLAIN PRIVACY shows what a query would cost and how noisy each part
// would be, without running or charging it.
func TestExplainPrivacy(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		c := tg.session(t, "tester", testerPassword)
		mustExec(t, c, "SET dp_epsilon = 0.9")
		before, _ := budget(t, c)
		cols, rows := queryRows(t, c, "EXPLAIN PRIVACY SELECT sex, COUNT(*), AVG(age) FROM adult GROUP BY sex")
		if cols[0] != "aggregate" || cols[7] != "ci95_half_width" || len(rows) != 4 {
			t.Fatalf("EXPLAIN PRIVACY: %v\n%v", cols, rows)
		}
		sum := 0.0
		for _, r := range rows[:3] {
			sum += num(t, r[5])
			if r[2] != "laplace" || num(t, r[4]) <= 0 || num(t, r[7]) <= num(t, r[4]) {
				t.Errorf("row %v: want laplace with a positive scale and a 95%% half-width above it", r)
			}
		}
		if rows[0][0] != "COUNT(*)" || num(t, rows[0][3]) != 1 {
			t.Errorf("COUNT(*) over adult has sensitivity 1: %v", rows[0])
		}
		if total := num(t, rows[3][5]); math.Abs(total-0.9) > 1e-9 || math.Abs(sum-0.9) > 1e-9 {
			t.Errorf("ε shares %v and total %v, want 0.9", sum, total)
		}
		if after, _ := budget(t, c); after != before {
			t.Errorf("EXPLAIN PRIVACY charged %v", after-before)
		}
	})
}

// MIN, MAX, MEDIAN and PERCENTILE_CONT are DP quantiles over the column's
// public domain (exponential mechanism on a backend histogram); at a large ε
// they land on the true value.
func TestQuantiles(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		c := tg.session(t, "tester", testerPassword)
		mustExec(t, c, "SET dp_epsilon = 1e4")
		_, rows := queryRows(t, c, "SELECT MIN(age), MAX(age), MEDIAN(age), MEDIAN(hours_per_week) FROM adult WHERE sex = 'Female'")
		exactMin := num(t, tg.exact(t, "SELECT MIN(age) FROM adult WHERE sex = 'Female'")[0][0])
		exactMax := num(t, tg.exact(t, "SELECT MAX(age) FROM adult WHERE sex = 'Female'")[0][0])
		// The median of Adult's women: 35 years, 40 hours.
		if got := num(t, rows[0][0]); got != exactMin {
			t.Errorf("MIN(age) = %v, exact %v", got, exactMin)
		}
		if got := num(t, rows[0][1]); got != exactMax {
			t.Errorf("MAX(age) = %v, exact %v", got, exactMax)
		}
		if got := num(t, rows[0][2]); math.Abs(got-35) > 1 {
			t.Errorf("MEDIAN(age) = %v, want about 35", got)
		}
		if got := num(t, rows[0][3]); math.Abs(got-40) > 1 {
			t.Errorf("MEDIAN(hours_per_week) = %v, want about 40", got)
		}
		_, rows = queryRows(t, c, "SELECT sex, MEDIAN(age) FROM adult GROUP BY sex ORDER BY sex")
		if len(rows) != 2 || math.Abs(num(t, rows[1][1])-38) > 1 {
			t.Errorf("MEDIAN(age) by sex: %v (men: about 38)", rows)
		}
		// At a small ε the answer is noisy but stays in the public domain.
		mustExec(t, c, "SET dp_epsilon = 0.05")
		_, rows = queryRows(t, c, "SELECT MEDIAN(age) FROM pums")
		if got := num(t, rows[0][0]); got < 0 || got > 100 {
			t.Errorf("MEDIAN(age) over pums at ε=0.05 = %v, outside [0, 100]", got)
		}
	})
}

// SET dp_confidence adds an interval for every aggregate column; over many
// answers the true value lies inside at least as often as promised.
func TestConfidenceIntervals(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		c := tg.session(t, "tester", testerPassword)
		mustExec(t, c, "SET dp_epsilon = 0.5")
		mustExec(t, c, "SET dp_confidence = 0.9")
		mustExec(t, c, "SET dp_cache = off")
		exactN := num(t, tg.exact(t, "SELECT COUNT(*) FROM adult WHERE race = 'Other'")[0][0])
		exactAvg := num(t, tg.exact(t, "SELECT AVG(age) FROM adult WHERE race = 'Other'")[0][0])
		const runs = 100
		coveredN, coveredAvg := 0, 0
		for i := 0; i < runs; i++ {
			cols, rows := queryRows(t, c, "SELECT COUNT(*) AS n, AVG(age) AS a FROM adult WHERE race = 'Other'")
			if len(cols) != 6 || cols[2] != "n_ci_low" || cols[5] != "a_ci_high" {
				t.Fatalf("columns %v", cols)
			}
			r := rows[0]
			if num(t, r[2]) <= exactN && exactN <= num(t, r[3]) {
				coveredN++
			}
			if num(t, r[4]) <= exactAvg && exactAvg <= num(t, r[5]) {
				coveredAvg++
			}
		}
		// 90% nominal; with 100 runs, fewer than 80 covered would be a
		// 3-sigma failure of the promise.
		if coveredN < 80 || coveredAvg < 80 {
			t.Errorf("coverage over %d runs: COUNT %d, AVG %d (nominal 90%%)", runs, coveredN, coveredAvg)
		}
		mustExec(t, c, "SET dp_confidence = 'off'")
		if cols, _ := queryRows(t, c, "SELECT COUNT(*) FROM adult"); len(cols) != 1 {
			t.Errorf("dp_confidence off still adds columns: %v", cols)
		}
	})
}

// A private table joins a public one on a key the policy declares unique:
// the public columns become lookups, so grouping by them releases their
// public values and sums over them are bounded by them.
func TestJoinWithPublicTable(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		c := tg.session(t, "tester", testerPassword)
		mustExec(t, c, "SET dp_epsilon = 1e5")
		_, rows := queryRows(t, c, `SELECT e.level, COUNT(*) AS n, SUM(e.years) AS y, AVG(a.hours_per_week) AS h
			FROM adult a JOIN education_levels e ON a.education_num = e.education_num
			WHERE a.sex = 'Female' GROUP BY e.level ORDER BY e.level`)
		want := tg.exact(t, `SELECT e.level, COUNT(*), SUM(e.years), AVG(a.hours_per_week)
			FROM adult a JOIN education_levels e ON a.education_num = e.education_num
			WHERE a.sex = 'Female' GROUP BY e.level ORDER BY e.level`)
		if len(rows) != len(want) || len(rows) != 6 {
			t.Fatalf("levels: proxy %v, exact %v", rows, want)
		}
		for i := range want {
			if rows[i][0] != want[i][0] || num(t, rows[i][1]) != num(t, want[i][1]) ||
				math.Abs(num(t, rows[i][2])-num(t, want[i][2])) > 1 || math.Abs(num(t, rows[i][3])-num(t, want[i][3])) > 0.01 {
				t.Errorf("row %d: proxy %v, exact %v", i, rows[i], want[i])
			}
		}
		// The public table alone is read as it is.
		if _, pub := queryRows(t, c, "SELECT education, years FROM education_levels WHERE education_num = 13"); len(pub) != 1 || pub[0][0] != "Bachelors" {
			t.Errorf("public table read: %v", pub)
		}
		if me := mysqlError(t, c, "SELECT COUNT(*) FROM adult a JOIN education_levels e ON a.education = e.level"); me.Number != 1227 || !strings.Contains(me.Message, "unique") {
			t.Errorf("a join on a non-unique public column: %v", me)
		}
	})
}
