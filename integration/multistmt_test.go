package integration

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	osexec "os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// A simple query of several statements through the PostgreSQL door runs
// each in turn, as PostgreSQL does: psqlODBC's connect string, sequelize's,
// a batch with a DP query in the middle (charged once), an error in the
// middle (the rest skipped). pgconn's Exec sends one simple Query message
// and reads every statement's result.
func TestPGMultiStatement(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		host, port := hostPort(t, tg.pgAddr)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		pc, err := pgconn.Connect(ctx, "host="+host+" port="+port+" user=multistmt password=multistmt dbname="+tg.db+" sslmode=disable")
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close(context.Background())
		exec := func(sql string) ([]*pgconn.Result, error) {
			t.Helper()
			return pc.Exec(ctx, sql).ReadAll()
		}
		mustExec := func(sql string, tags ...string) []*pgconn.Result {
			t.Helper()
			res, err := exec(sql)
			if err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
			if len(res) != len(tags) {
				t.Fatalf("%s: %d results, want %d", sql, len(res), len(tags))
			}
			for i, r := range res {
				if r.Err != nil || tags[i] != "" && r.CommandTag.String() != tags[i] {
					t.Fatalf("%s: result %d: tag %q, error %v; want %q", sql, i, r.CommandTag, r.Err, tags[i])
				}
			}
			return res
		}
		spent := func() float64 {
			t.Helper()
			res := mustExec("SHOW PRIVACY BUDGET", "SELECT 1")
			for i, f := range res[0].FieldDescriptions {
				if f.Name == "epsilon_basic" {
					v, err := strconv.ParseFloat(string(res[0].Rows[0][i]), 64)
					if err != nil {
						t.Fatal(err)
					}
					return v
				}
			}
			t.Fatalf("SHOW PRIVACY BUDGET has no epsilon_basic: %v", res[0].FieldDescriptions)
			return 0
		}

		// psqlODBC's connect string, exactly.
		res := mustExec("SET DateStyle = 'ISO';SET extra_float_digits = 2;show transaction_isolation", "SET", "SET", "") // PostgreSQL's tag is SHOW; drivers read the row
		if len(res[2].Rows) != 1 || string(res[2].Rows[0][0]) != "read committed" {
			t.Errorf("show transaction_isolation: %q", res[2].Rows)
		}
		// sequelize's.
		mustExec("SET client_min_messages TO warning;SET TIME ZONE INTERVAL '+00:00' HOUR TO MINUTE;", "SET", "SET")

		// A DP query in the middle of a batch is answered and charged once.
		mustExec("SET dp_cache = off", "SET")
		before := spent()
		res = mustExec("SET dp_epsilon = 0.25; SELECT COUNT(*) AS n FROM adult; SELECT 'a;b' AS s, $$c;d$$ AS d;;",
			"SET", "SELECT 1", "SELECT 1")
		if n, err := strconv.ParseFloat(string(res[1].Rows[0][0]), 64); err != nil || n < 1000 {
			t.Errorf("noisy count %q", res[1].Rows[0][0])
		}
		if got := string(res[2].Rows[0][0]) + "|" + string(res[2].Rows[0][1]); got != "a;b|c;d" {
			t.Errorf("semicolons in quotes: %q", got)
		}
		if got := spent() - before; math.Abs(got-0.25) > 1e-9 {
			t.Errorf("a batch with one DP query at ε=0.25 spent %v", got)
		}

		// An error in the middle: the statements after it are skipped (the
		// second DP query is not run, nor charged).
		before = spent()
		res, err = exec("SELECT COUNT(*) FROM adult; SELECT * FROM adult; SELECT COUNT(*) FROM adult")
		var pgErr *pgconn.PgError
		if len(res) != 1 || res[0].Err != nil || res[0].CommandTag.String() != "SELECT 1" ||
			err == nil || !errors.As(err, &pgErr) || pgErr.Code != "42501" {
			t.Errorf("error in the middle: %d results, %v", len(res), err)
		}
		if got := spent() - before; math.Abs(got-0.25) > 1e-9 {
			t.Errorf("the statement after an error was charged: spent %v, want 0.25", got)
		}

		// A syntax error anywhere runs nothing, as in PostgreSQL.
		before = spent()
		if _, err := exec("SELECT COUNT(*) FROM adult; SELEC 1"); err == nil || !errors.As(err, &pgErr) || pgErr.Code != "42601" {
			t.Errorf("syntax error after a DP query: %v", err)
		}
		if got := spent() - before; got != 0 {
			t.Errorf("a text with a syntax error ran a DP query: spent %v", got)
		}

		// Only white space, semicolons and comments: EmptyQueryResponse.
		// (pgconn reads EmptyQueryResponse as one result with an empty tag.)
		if res, err := exec(" ; -- nothing\n;"); err != nil || len(res) != 1 || res[0].CommandTag.String() != "" || res[0].FieldDescriptions != nil {
			t.Errorf("empty statements: %d results, %v", len(res), err)
		}

		// The extended protocol still takes one statement only.
		if _, err := pc.Prepare(ctx, "", "SELECT 1; SELECT 2", nil); err == nil || !strings.Contains(err.Error(), "multi") {
			t.Errorf("Parse of two statements: %v", err)
		}
	})
}

// psqlODBC (the ODBC path of Tableau, Excel, Power BI) through unixODBC
// and pyodbc: it connects (its connect string is several statements in one
// simple query) and counts. Skipped when the Debian packages are missing
// (scripts/test.sh installs them).
func TestPGODBC(t *testing.T) {
	const driver = "/usr/lib/x86_64-linux-gnu/odbc/psqlodbcw.so"
	if _, err := os.Stat(driver); err != nil {
		t.Skip("odbc-postgresql is not installed")
	}
	forEach(t, func(t *testing.T, tg *target) {
		host, port := hostPort(t, tg.pgAddr)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		out, err := osexec.CommandContext(ctx, "/usr/bin/python3", "testdata/pgodbc.py", host, port, "tester", testerPassword, tg.db, driver).CombinedOutput()
		if err != nil {
			if strings.Contains(string(out), "ModuleNotFoundError") && os.Getenv("CI") == "" {
				t.Skipf("pyodbc missing: %s", out)
			}
			t.Fatalf("pgodbc.py: %v\n%s", err, out)
		}
		var got map[string]float64
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("pgodbc.py output: %v\n%s", err, out)
		}
		if got["count"] < 1000 || got["epsilon_basic"] <= 0 {
			t.Errorf("pgodbc.py: %v", got)
		}
	})
}
