package integration

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"
)

// The side channels around a release (Haeberlen, Pierce, Narayan, "Differential
// Privacy Under Fire", USENIX Security 2011): for every statement below, two
// databases that differ in one person must give the same outcome — answer or
// error, the error's text, the charge — except through the calibrated noise.
// Each pair differs only in whether the target person matches: pid = <a
// person who exists> against pid = <nobody>. Each statement is one the
// attackers of issue 11 used to read a record for free; run through both
// doors against SQLite, MariaDB and PostgreSQL.

// sideChannelProbes are MySQL-dialect templates; %[1]d is the target pid.
var sideChannelProbes = []string{
	// A text-to-number cast that fails only on the person's row (PostgreSQL).
	"SELECT COUNT(*) FROM pums_person WHERE (CASE WHEN pid = %[1]d THEN CAST(CONCAT('age=', age, ' income=', income) AS SIGNED) ELSE 0 END) > 0",
	// Integer overflow in one branch, double overflow in the other (MariaDB).
	"SELECT COUNT(*) FROM pums_person WHERE (CASE WHEN pid = %[1]d THEN 9223372036854775807 + pid ELSE EXP(1000 + pid) END) > 0",
	// ABS of the smallest int64 (SQLite's integer overflow).
	"SELECT COUNT(*) FROM pums_person WHERE ABS(CASE WHEN pid = %[1]d THEN -9223372036854775807 - 1 ELSE 0 END) > 0",
	// Division and modulo by zero, square root and logarithm off their domain.
	"SELECT COUNT(*) FROM pums_person WHERE 1 / (CASE WHEN pid = %[1]d THEN 0 ELSE 1 END) > 0",
	"SELECT COUNT(*) FROM pums_person WHERE MOD(5, CASE WHEN pid = %[1]d THEN 0 ELSE 2 END) = 1",
	"SELECT COUNT(*) FROM pums_person WHERE SQRT(CASE WHEN pid = %[1]d THEN -1 ELSE 1 END) > 0",
	"SELECT COUNT(*) FROM pums_person WHERE LN(CASE WHEN pid = %[1]d THEN 0 ELSE 1 END) >= 0",
	// Inside an aggregate's argument.
	"SELECT SUM(CASE WHEN pid = %[1]d THEN age / (age - age) ELSE age END) FROM pums_person",
	"SELECT AVG(income * (CASE WHEN pid = %[1]d THEN 9223372036854775807 ELSE 1 END)) FROM pums_person",
	// A string that grows exponentially only for the person (a timing channel).
	"SELECT COUNT(*) FROM pums_person WHERE LENGTH(CASE WHEN pid = %[1]d AND income > 0 THEN REPLACE(REPLACE(REPLACE(REPLACE('aaaaaaaaaa','a','aaaaaaaaaa'),'a','aaaaaaaaaa'),'a','aaaaaaaaaa'),'a','aaaaaaaaaa') ELSE '' END) = 1",
	// A refusal found in HAVING must come before the charge.
	"SELECT COUNT(*) FROM pums_person WHERE pid = %[1]d HAVING SLEEP(2) = 0",
	// Partition selection over a key whose values are not public.
	"SELECT income, COUNT(*) FROM pums_person WHERE pid = %[1]d GROUP BY income",
	// A plain count: the control, answered and charged on both sides.
	"SELECT COUNT(*) FROM pums_person WHERE pid = %[1]d",
}

// pgDialect writes a probe in the PostgreSQL door's dialect.
func pgDialect(q string) string {
	return strings.NewReplacer("AS SIGNED", "AS BIGINT", "SLEEP(", "pg_sleep(").Replace(q)
}

// outcome is everything a client sees of one statement but the noisy values.
type outcome struct {
	ok      bool
	code    string // MySQL error number or SQLSTATE
	message string // normalised: the target pid and incident ids masked
	columns string
	charged float64 // ε spent by the statement
	elapsed time.Duration
}

func (o outcome) same(p outcome) bool {
	return o.ok == p.ok && o.code == p.code && o.message == p.message && o.columns == p.columns &&
		abs(o.charged-p.charged) < 1e-9
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

var incidentRE = regexp.MustCompile(`incident [0-9a-f]+`)

// probe runs q on c and reports its outcome; spent reads the session's ε.
func probe(t *testing.T, c *sql.Conn, q string, pid int64, spent func() float64) outcome {
	t.Helper()
	before := spent()
	start := time.Now()
	var o outcome
	rows, err := c.QueryContext(context.Background(), q)
	if err == nil {
		cols, _ := rows.Columns()
		o.columns = strings.Join(cols, ",")
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	o.elapsed = time.Since(start)
	if err == nil {
		o.ok = true
	} else {
		var me *mysql.MySQLError
		var pe *pq.Error
		switch {
		case errors.As(err, &me):
			o.code, o.message = fmt.Sprint(me.Number), me.Message
		case errors.As(err, &pe):
			o.code, o.message = string(pe.Code), pe.Message
		default:
			t.Fatalf("%s: not a server error: %v", q, err)
		}
		o.columns = ""
		o.message = incidentRE.ReplaceAllString(o.message, "incident X")
	}
	// The MySQL door names a column by its expression, which holds the pid.
	mask := regexp.MustCompile(`(^|[^0-9])` + regexp.QuoteMeta(fmt.Sprint(pid)) + `($|[^0-9])`)
	o.message = mask.ReplaceAllString(o.message, "${1}PID${2}")
	o.columns = mask.ReplaceAllString(o.columns, "${1}PID${2}")
	o.charged = spent() - before
	return o
}

// spentOn reads the session's ε by basic composition (Σε, so that the
// difference is exactly one statement's charge) through the same door.
func spentOn(t *testing.T, c *sql.Conn) func() float64 {
	return func() float64 {
		cols, rows := queryRows(t, c, "SHOW PRIVACY BUDGET")
		if len(cols) < 7 || cols[6] != "epsilon_basic" {
			t.Fatalf("SHOW PRIVACY BUDGET columns: %v", cols)
		}
		return num(t, rows[0][6])
	}
}

func TestSideChannelPairsGiveTheSameOutcome(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		var someone int64
		// A pid of several digits, so that masking it in messages masks
		// nothing else.
		if err := tg.direct.QueryRow("SELECT MIN(pid) FROM pums_person WHERE pid > 100").Scan(&someone); err != nil {
			t.Fatal(err)
		}
		const nobody = -424242
		doors := []struct {
			name    string
			conn    func() *sql.Conn
			dialect func(string) string
		}{
			{"mysql door", func() *sql.Conn { return tg.session(t, "tester", testerPassword) }, func(q string) string { return q }},
			{"postgres door", func() *sql.Conn { return tg.pgSession(t, "tester", testerPassword) }, pgDialect},
		}
		for _, door := range doors {
			t.Run(door.name, func(t *testing.T) {
				c := door.conn()
				if _, err := c.ExecContext(context.Background(), "SET dp_cache = off"); err != nil {
					t.Fatal(err)
				}
				spent := spentOn(t, c)
				for _, tmpl := range sideChannelProbes {
					q := door.dialect(tmpl)
					match := probe(t, c, fmt.Sprintf(q, someone), someone, spent)
					miss := probe(t, c, fmt.Sprintf(q, nobody), nobody, spent)
					if !match.same(miss) {
						t.Errorf("%s\n  person present: %+v\n  person absent:  %+v", q, match, miss)
					}
					// A failure after the charge would mean the SQL sent to
					// the backend was not total: even if both sides failed
					// alike here, another row could make one side fail.
					for _, o := range []outcome{match, miss} {
						if strings.Contains(o.message, "incident") {
							t.Errorf("%s failed after its charge: %s", q, o.message)
						}
						if !o.ok && o.charged != 0 {
							t.Errorf("%s was refused but charged ε=%g", q, o.charged)
						}
					}
					t.Logf("%s: %v / %v", q[:min(len(q), 60)], match.elapsed.Round(time.Millisecond), miss.elapsed.Round(time.Millisecond))
				}
			})
		}
	})
}

// Deeply nested or oversized statements are refused, not fatal: the proxy
// keeps serving both doors afterwards.
func TestHostileStatementsLeaveTheProxyServing(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		c := tg.session(t, "tester", testerPassword)
		hostile := []string{
			"SELECT " + strings.Repeat("-", 500_000) + "1",
			"SELECT " + strings.Repeat("(", 200_000) + "1" + strings.Repeat(")", 200_000),
			"SELECT COUNT(*) FROM adult WHERE " + strings.Repeat("CASE WHEN age > 1 THEN ", 20_000) + "1" + strings.Repeat(" END", 20_000) + " = 1",
			"SELECT '" + strings.Repeat("x", 2<<20) + "'",
		}
		for _, q := range hostile {
			rows, err := c.QueryContext(context.Background(), q)
			if err == nil {
				rows.Close()
				t.Errorf("a hostile statement of %d bytes was answered", len(q))
				continue
			}
			var me *mysql.MySQLError
			if !errors.As(err, &me) {
				// The connection may be closed for an oversized packet;
				// a new one must still work (checked below).
				t.Logf("hostile statement of %d bytes: %v", len(q), err)
			}
		}
		c2 := tg.session(t, "tester", testerPassword)
		if _, rows := queryRows(t, c2, "SELECT 1 + 1"); rows[0][0] != "2" {
			t.Errorf("SELECT 1 + 1 = %v after hostile statements", rows)
		}
		pg := tg.pgSession(t, "tester", testerPassword)
		if _, rows := queryRows(t, pg, "SELECT 1 + 1"); rows[0][0] != "2" {
			t.Errorf("PostgreSQL door: SELECT 1 + 1 = %v after hostile statements", rows)
		}
	})
}
