package pgwire

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// psql runs the real client against s and returns stdout, stderr and
// whether it exited 0. The test is skipped where psql is not installed.
func psql(t *testing.T, s *Server, user, password, sslmode string, args ...string) (string, string, bool) {
	t.Helper()
	bin, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed")
	}
	host, port, _ := strings.Cut(s.Addr(), ":")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conninfo := "host=" + host + " port=" + port + " user=" + user + " dbname=demo sslmode=" + sslmode
	cmd := exec.CommandContext(ctx, bin, append([]string{conninfo, "-X", "--no-password"}, args...)...)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+password, "PGCONNECT_TIMEOUT=10", "PGAPPNAME=psql-test")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return stdout.String(), stderr.String(), err == nil
}

func TestPsql(t *testing.T) {
	s, e := startServer(t)
	out, errOut, ok := psql(t, s, "alice", alicePassword, "disable", "-At", "-c", "SELECT 1")
	if !ok || out != "1\n" {
		t.Fatalf("psql SELECT 1: %q %q", out, errOut)
	}
	out, errOut, ok = psql(t, s, "bob", bobPassword, "prefer", "-At", "-F", ",", "-c", "select mixed")
	if want := "-42,1234567,héllo,2024-02-29,2024-02-29 13:14:15.5,\n,,,,,\n"; !ok || out != want {
		t.Fatalf("psql select mixed: %q %q, want %q", out, errOut, want)
	}
	if opened, _, _, _ := e.snapshot(); len(opened) != 2 || opened[0] != "alice/demo/psql-test" {
		t.Fatalf("Open got %v", opened)
	}

	// An error shows its SQLSTATE with VERBOSITY verbose.
	_, errOut, ok = psql(t, s, "alice", alicePassword, "disable", "-v", "VERBOSITY=verbose", "-c", "error budget")
	if ok || !strings.Contains(errOut, "ERROR:  "+SQLStateBudget+": failed: budget") {
		t.Fatalf("psql error: %q", errOut)
	}
	_, errOut, ok = psql(t, s, "alice", "wrong", "disable", "-c", "SELECT 1")
	if ok || !strings.Contains(errOut, `password authentication failed for user "alice"`) {
		t.Fatalf("psql wrong password: %q", errOut)
	}
	_, errOut, ok = psql(t, s, "alice", alicePassword, "require", "-c", "SELECT 1")
	if ok {
		t.Fatalf("psql sslmode=require connected without TLS: %q", errOut)
	}
}

func TestPsqlTLS(t *testing.T) {
	s, _ := startServer(t, withTLS(t))
	out, errOut, ok := psql(t, s, "alice", alicePassword, "require", "-c", `\conninfo`, "-At", "-c", "SELECT 1")
	if !ok || !strings.Contains(out, "SSL connection") || !strings.HasSuffix(out, "\n1\n") {
		t.Fatalf("psql over TLS: %q %q", out, errOut)
	}
	// carol has only a MySQL hash: psql sends her password in cleartext,
	// which the server asks for over TLS only.
	out, errOut, ok = psql(t, s, "carol", carolPassword, "require", "-At", "-c", "SELECT 1")
	if !ok || out != "1\n" {
		t.Fatalf("psql cleartext over TLS: %q %q", out, errOut)
	}
	_, errOut, ok = psql(t, s, "carol", carolPassword, "disable", "-c", "SELECT 1")
	if ok || !strings.Contains(errOut, "password authentication failed") {
		t.Fatalf("psql cleartext without TLS: %q", errOut)
	}
}
