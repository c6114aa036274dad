package integration

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// psql, as an analyst would use it against the PostgreSQL door: its
// catalog commands, aggregates, the budget, an error with its SQLSTATE.
func TestPsql(t *testing.T) {
	psql := requireTool(t, "psql")
	forEach(t, func(t *testing.T, tg *target) {
		host, port := hostPort(t, tg.pgAddr)
		conn := "host=" + host + " port=" + port + " user=tester password=" + testerPassword + " dbname=" + tg.db + " sslmode=disable"
		run := func(args ...string) (string, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, psql, append([]string{conn, "-X", "-v", "VERBOSITY=verbose"}, args...)...).CombinedOutput()
			return string(out), err
		}
		out, err := run("-c", "SET dp_epsilon = 100000", "-c", "SELECT sex, COUNT(*) AS n FROM adult GROUP BY sex", "-c", "SHOW PRIVACY BUDGET", "-c", `\conninfo`,
			"-c", "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY age) AS median_age, COUNT(*)::float / 2 AS half FROM adult WHERE age::int > 16")
		if err != nil {
			t.Fatalf("psql: %v\n%s", err, out)
		}
		for _, want := range []string{"Female", "Male", "epsilon_spent", "You are connected to database \"" + tg.db + "\"", "median_age", "     37 "} {
			if !strings.Contains(out, want) {
				t.Errorf("psql output lacks %q:\n%s", want, out)
			}
		}
		out, err = run("-c", `\dt`, "-c", `\d adult`, "-c", `\l`)
		if err != nil {
			t.Fatalf("psql catalog commands: %v\n%s", err, out)
		}
		for _, want := range []string{"adult", "pums", "hours_per_week", "bigint", tg.db} {
			if !strings.Contains(out, want) {
				t.Errorf("psql \\dt / \\d adult / \\l lack %q:\n%s", want, out)
			}
		}
		out, err = run("-c", "SELECT * FROM adult")
		if err == nil || !strings.Contains(out, "42501") {
			t.Errorf("SELECT * through psql should fail with SQLSTATE 42501: %v\n%s", err, out)
		}
		out, err = run("-c", "SELEC 1")
		if err == nil || !strings.Contains(out, "42601") {
			t.Errorf("a syntax error through psql should be 42601: %v\n%s", err, out)
		}
	})
}

// psycopg2, psycopg 3, SQLAlchemy 1.4 and pandas from Debian's python3.
func TestPythonPG(t *testing.T) {
	forEach(t, func(t *testing.T, tg *target) {
		host, port := hostPort(t, tg.pgAddr)
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "/usr/bin/python3", "testdata/pgclients.py", host, port, "tester", testerPassword, tg.db)
		out, err := cmd.Output()
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			if strings.Contains(stderr, "ModuleNotFoundError") && os.Getenv("CI") == "" {
				t.Skipf("python modules missing (scripts/test.sh installs them): %s", stderr)
			}
			t.Fatalf("pgclients.py: %v\n%s\n%s", err, out, stderr)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("pgclients.py output: %v\n%s", err, out)
		}
		checks := map[string]any{
			"psycopg2_groups": 2.0, "psycopg2_refused": "42501",
			"psycopg3_groups": 16.0, "psycopg3_refused": "42501", "psycopg3_prepared": true,
			"pandas_rows": 5.0,
		}
		for k, want := range checks {
			if got[k] != want {
				t.Errorf("%s = %v, want %v (all: %v)", k, got[k], want, got)
			}
		}
		if tables, _ := got["sqlalchemy_tables"].([]any); len(tables) < 2 {
			t.Errorf("SQLAlchemy reflection found %v", got["sqlalchemy_tables"])
		}
	})
}

// pgjdbc from a small Java program: a PreparedStatement run 8 times (named
// statements and binary results from the 5th), metadata, a refusal.
func TestPgJDBC(t *testing.T) {
	javac := requireTool(t, "javac")
	java := requireTool(t, "java")
	const jar = "/usr/share/java/postgresql.jar"
	if _, err := os.Stat(jar); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing; scripts/test.sh installs libpostgresql-jdbc-java", jar)
		}
		t.Skip("libpostgresql-jdbc-java is not installed (scripts/test.sh installs it)")
	}
	classes := t.TempDir()
	if out, err := exec.Command(javac, "-d", classes, "-cp", jar, "testdata/PgJDBC.java").CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	forEach(t, func(t *testing.T, tg *target) {
		host, port := hostPort(t, tg.pgAddr)
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, java, "-cp", classes+":"+jar, "PgJDBC", host, port, "tester", testerPassword, tg.db).CombinedOutput()
		if err != nil {
			t.Fatalf("PgJDBC: %v\n%s", err, out)
		}
		got := map[string]string{}
		for _, line := range strings.Split(string(out), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				got[k] = v
			}
		}
		if got["prepared7"] == "" || got["columns"] != "15" || got["refused"] != "42501" ||
			!strings.Contains(got["tables"], "adult") {
			t.Errorf("pgjdbc results: %v\n%s", got, out)
		}
	})
}
