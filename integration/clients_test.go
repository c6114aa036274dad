package integration

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// requireTool finds a client program. scripts/test.sh installs every one of
// them, so in CI a missing tool fails the test rather than skipping it.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed; scripts/test.sh should have installed it", name)
		}
		t.Skipf("%s is not installed (scripts/test.sh installs it)", name)
	}
	return p
}

func hostPort(t *testing.T, addr string) (string, string) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return h, p
}

// The mariadb command-line client, as an analyst would use it: it sends
// its own connect-time queries (select @@version_comment limit 1) and, with
// a database argument, reads the table list for completion.
func TestMariaDBCLI(t *testing.T) {
	cli := requireTool(t, "mariadb")
	forEach(t, func(t *testing.T, tg *target) {
		host, port := hostPort(t, tg.addr)
		run := func(user, pw, sql string) (string, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, cli, "-h", host, "-P", port, "-u", user, "-p"+pw,
				"--ssl=0", "--batch", tg.db, "-e", sql)
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		out, err := run("tester", testerPassword, "SET dp_epsilon = 1e6; SELECT sex, COUNT(*) AS n FROM adult GROUP BY sex; SHOW TABLES; DESCRIBE pums; SHOW DATABASES; SHOW PRIVACY BUDGET")
		if err != nil {
			t.Fatalf("mariadb: %v\n%s", err, out)
		}
		for _, want := range []string{"sex\tn", "Female\t", "Male\t", "adult", "pums", "income\t", "epsilon_spent", tg.db} {
			if !strings.Contains(out, want) {
				t.Errorf("mariadb output lacks %q:\n%s", want, out)
			}
		}
		out, err = run("tester", testerPassword, "SELECT * FROM adult")
		if err == nil || !strings.Contains(out, "ERROR 1227") {
			t.Errorf("SELECT * through the CLI: err=%v\n%s", err, out)
		}
		out, err = run("tester", testerPassword, "SELEC 1")
		if err == nil || !strings.Contains(out, "ERROR 1064") {
			t.Errorf("syntax error through the CLI: err=%v\n%s", err, out)
		}
		out, err = run("analyst", "not-the-password", "SELECT 1")
		if err == nil || !strings.Contains(out, "ERROR 1045") {
			t.Errorf("wrong password through the CLI: err=%v\n%s", err, out)
		}
	})
}

// pymysql and SQLAlchemy (with pandas-style use) from Debian's python3.
func TestPython(t *testing.T) {
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		requireTool(t, "python3-from-debian")
	}
	forEach(t, func(t *testing.T, tg *target) {
		host, port := hostPort(t, tg.addr)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, python, "testdata/clients.py", host, port, "tester", testerPassword, tg.db)
		out, err := cmd.Output()
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			if strings.Contains(stderr, "ModuleNotFoundError") && os.Getenv("CI") == "" {
				t.Skipf("python modules missing (scripts/test.sh installs them): %s", stderr)
			}
			t.Fatalf("clients.py: %v\n%s\n%s", err, out, stderr)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("clients.py output: %v\n%s", err, out)
		}
		for _, k := range []string{"pymysql_count", "pymysql_groups", "pymysql_refused", "sqlalchemy_groups", "sqlalchemy_prepared"} {
			if _, ok := got[k]; !ok {
				t.Errorf("clients.py did not report %s: %s", k, out)
			}
		}
		if g, _ := got["pymysql_groups"].(float64); g != 2 {
			t.Errorf("pymysql GROUP BY sex: %v groups", got["pymysql_groups"])
		}
		if r, _ := got["pymysql_refused"].(float64); r != 1227 {
			t.Errorf("pymysql refusal code: %v", got["pymysql_refused"])
		}
	})
}

// MariaDB Connector/J (Debian's libmariadb-java) from a small Java program:
// its connect-time @@ variables, metadata, prepared statements.
func TestConnectorJ(t *testing.T) {
	javac := requireTool(t, "javac")
	java := requireTool(t, "java")
	const jar = "/usr/share/java/mariadb-java-client.jar"
	if _, err := os.Stat(jar); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing; scripts/test.sh installs libmariadb-java", jar)
		}
		t.Skip("libmariadb-java is not installed (scripts/test.sh installs it)")
	}
	classes := t.TempDir()
	if out, err := exec.Command(javac, "-d", classes, "-cp", jar, "testdata/ConnectorJ.java").CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	forEach(t, func(t *testing.T, tg *target) {
		host, port := hostPort(t, tg.addr)
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, java, "-cp", classes+":"+jar, "ConnectorJ", host, port, "tester", testerPassword, tg.db).CombinedOutput()
		if err != nil {
			t.Fatalf("ConnectorJ: %v\n%s", err, out)
		}
		got := map[string]string{}
		for _, line := range strings.Split(string(out), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				got[k] = v
			}
		}
		if got["groups"] != "2" || got["prepared5"] == "" || got["columns"] != "15" || got["refused"] != "1227" ||
			!strings.Contains(got["tables"], "adult") || !strings.Contains(got["tables"], "pums") {
			t.Errorf("Connector/J results: %v\n%s", got, out)
		}
	})
}
