package integration

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/demo"
	"github.com/dpproxy/dpproxy/ledger"
)

// The proxy is killed with SIGKILL at random moments while clients query,
// and restarted, many times. Every answer a client received must have its
// charge in the ledger, and no budget may ever be exceeded: a charge is
// durable before the first byte of its answer leaves.
func TestSIGKILLNeverLosesACharge(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "dpproxy")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/dpproxy").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	pol, err := demo.Policy(demo.Options{MySQLListen: "127.0.0.1:0", PGListen: "127.0.0.1:0", AdminListen: "127.0.0.1:0", DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.Prepare(context.Background(), pol); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	config := filepath.Join(dir, "dpproxy.yaml")
	// The analyst may spend ε 3 at ε 0.02 per answer: about 150 answers fit,
	// so the rounds run into the budget and the check is not vacuous.
	policyText := fmt.Sprintf(`listen: {mysql: "127.0.0.1:%d"}
backend: {driver: sqlite, dsn: %q}
ledger: {path: %q}
defaults: {epsilon: 0.02, delta: 1.0e-6}
limits: {answer_cache_ttl: -1s}
roles: {analyst: {budget: {epsilon: 3, delta: 1.0e-5}}}
users: {analyst: {password: analyst, role: analyst}}
tables:
  adult:
    privacy_unit: row
    columns:
      age: {type: int, lower: 17, upper: 90}
`, port, pol.Backend.DSN, filepath.Join(dir, "ledger"))
	if err := os.WriteFile(config, []byte(policyText), 0o600); err != nil {
		t.Fatal(err)
	}
	// The driver logs every connection the kills cut; that is expected here.
	mysql.SetLogger(log.New(io.Discard, "", 0))
	var received atomic.Int64
	for round := 0; round < 12; round++ {
		cmd := exec.Command(bin, "serve", "--config", config, "--log-level", "error")
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitPort(t, port)
		db, err := sql.Open("mysql", fmt.Sprintf("analyst:analyst@tcp(127.0.0.1:%d)/main", port))
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					var n int64
					if err := db.QueryRow("SELECT COUNT(*) FROM adult").Scan(&n); err == nil {
						received.Add(1)
					} else {
						time.Sleep(5 * time.Millisecond)
					}
				}
			}()
		}
		time.Sleep(time.Duration(150+rand.IntN(500)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		close(stop)
		wg.Wait()
		db.Close()
	}
	led, err := ledger.Open(filepath.Join(dir, "ledger"), ledger.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	spent, err := led.UserSpent(context.Background(), "analyst")
	if err != nil {
		t.Fatal(err)
	}
	a := spent.Account(ledger.Budget{Epsilon: 3, Delta: 1e-5})
	t.Logf("%d answers received over 12 kills; %d charges in the ledger; spent ε=%.4f of 3", received.Load(), spent.Charges, a.Effective.Epsilon)
	if int64(spent.Charges) < received.Load() {
		t.Errorf("clients received %d answers but the ledger holds %d charges", received.Load(), spent.Charges)
	}
	if a.Effective.Epsilon > 3+1e-9 {
		t.Errorf("the budget was exceeded: ε=%v of 3", a.Effective.Epsilon)
	}
	if received.Load() == 0 {
		t.Error("no answer was received: the test tested nothing")
	}
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func waitPort(t *testing.T, port int) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("dpproxy did not listen on %d", port)
}
