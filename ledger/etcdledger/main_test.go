package etcdledger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// The tests run against a real etcd (Debian's etcd-server, /usr/bin/etcd)
// that TestMain starts on free loopback ports with a temporary data directory
// and stops at the end. Without the binary the tests skip, except in CI
// (CI set), where a missing etcd is a failure.

var (
	endpoint string // the etcd client URL; "" when no etcd runs
	noEtcd   string // why not
)

func TestMain(m *testing.M) {
	stop, err := startEtcd()
	if err != nil {
		if os.Getenv("CI") != "" {
			fmt.Fprintf(os.Stderr, "etcdledger: %v (CI is set, so this is a failure; apt-get install etcd-server)\n", err)
			os.Exit(1)
		}
		noEtcd = err.Error()
	}
	code := m.Run()
	if stop != nil {
		stop()
	}
	os.Exit(code)
}

func needEtcd(t testing.TB) {
	t.Helper()
	if endpoint == "" {
		t.Skipf("no etcd to test against: %s (apt-get install etcd-server)", noEtcd)
	}
}

func startEtcd() (stop func(), err error) {
	bin, err := exec.LookPath("etcd")
	if err != nil {
		if _, serr := os.Stat("/usr/bin/etcd"); serr != nil {
			return nil, errors.New("the etcd binary is not installed")
		}
		bin = "/usr/bin/etcd"
	}
	client, peer := freePort(), freePort()
	if client == 0 || peer == 0 {
		return nil, errors.New("no free loopback port for etcd")
	}
	dir, err := os.MkdirTemp("", "dpproxy-etcd-")
	if err != nil {
		return nil, err
	}
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", client)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
	logFile, err := os.Create(filepath.Join(dir, "etcd.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--name", "test", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "test="+peerURL, "--initial-cluster-state", "new")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// If the test binary dies, etcd dies with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logFile.Close()
		os.RemoveAll(dir)
	}
	if err := waitReady(clientURL, exited); err != nil {
		stop()
		return nil, err
	}
	endpoint = clientURL
	return stop, nil
}

func waitReady(url string, exited <-chan error) error {
	deadline := time.Now().Add(30 * time.Second)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("etcd exited at start: %v", err)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err = cli.Get(ctx, "health")
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("etcd at %s not ready after 30 s: %v", url, err)
}

func freePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// openTest opens a ledger on the test etcd under a prefix of its own.
func openTest(t testing.TB, prefix string) *Ledger {
	t.Helper()
	needEtcd(t)
	l, err := Open(context.Background(), Config{Endpoints: []string{endpoint}, Prefix: prefix,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}
