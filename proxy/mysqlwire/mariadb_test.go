package mysqlwire

import (
	"bytes"
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// mariadbArgs are the CLI's connection flags for a test server.
func mariadbArgs(s *Server, password string) []string {
	_, port, _ := strings.Cut(s.Addr(), ":")
	return []string{"--protocol=tcp", "-h127.0.0.1", "-P" + port, "-ualice", "-p" + password, "--skip-ssl", "--no-auto-rehash"}
}

func needBinary(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed", name)
	}
	return path
}

func TestMariaDBClientBatch(t *testing.T) {
	cli := needBinary(t, "mariadb")
	s, e := startServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	args := append(mariadbArgs(s, testPassword), "--batch", "-e", "select mixed; insert; use shop; select database()")
	out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput()
	t.Logf("mariadb output:\n%s", out)
	if err != nil {
		t.Fatalf("mariadb: %v", err)
	}
	want := "i\tf\ts\tn\td\tdt\n-42\t1234567.25\théllo\tNULL\t2024-02-29\t2024-02-29 13:14:15\nNULL\tNULL\tNULL\tNULL\tNULL\tNULL\ndatabase()\nshop\n"
	if string(out) != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	_, _, received, _ := e.snapshot()
	// The CLI sends "use shop" as COM_INIT_DB, which vitess passes on as
	// a USE statement.
	if !slices.Contains(received, "use `shop`") {
		t.Errorf("engine got %q, want the COM_INIT_DB as use `shop`", received)
	}
}

// TestMariaDBClientInteractive runs the CLI on a terminal, where it asks
// for @@version_comment right after connecting to print its banner.
func TestMariaDBClientInteractive(t *testing.T) {
	cli := needBinary(t, "mariadb")
	scriptBin := needBinary(t, "script")
	s, e := startServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	command := cli + " " + strings.Join(mariadbArgs(s, testPassword), " ")
	cmd := exec.CommandContext(ctx, scriptBin, "-qec", command, "/dev/null")
	cmd.Stdin = strings.NewReader("select 1;\nerror budget;\nwarn;\nquit\n")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("mariadb output:\n%s", out.String())
	if err != nil {
		t.Fatalf("mariadb: %v", err)
	}
	_, _, received, _ := e.snapshot()
	want := []string{"select @@version_comment limit 1", "select 1", "error budget", "warn"}
	if !slices.Equal(received, want) {
		t.Errorf("engine got %q, want %q", received, want)
	}
	for _, s := range []string{"dpproxy", "10.11.0-dpproxy", "ERROR 1227 (DP001)", "failed: budget", "1 row in set, 1 warning"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("output lacks %q", s)
		}
	}
}

func TestMariaDBClientWrongPassword(t *testing.T) {
	cli := needBinary(t, "mariadb")
	s, _ := startServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	args := append(mariadbArgs(s, "wrong"), "--batch", "-e", "select 1")
	out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput()
	if err == nil {
		t.Fatalf("mariadb accepted a wrong password: %s", out)
	}
	want := "ERROR 1045 (28000): Access denied for user 'alice'@'127.0.0.1' (using password: YES)"
	if !strings.Contains(string(out), want) {
		t.Errorf("output %q lacks %q", out, want)
	}
}
