package integration

// Hostile input at the network doors (issue 11, items 4 and 5): nothing a
// client sends before or after it authenticates may take the proxy down or
// grow it without bound. Each test starts its own server (over the demo's
// SQLite: the doors sit above the backend, which plays no part here) with
// the limits it tests, so that its throttles and caps touch no other test.

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	vtmysql "vitess.io/vitess/go/mysql"

	"github.com/dpproxy/dpproxy/demo"
	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/server"
)

// hostileServer starts a server over a fresh demo database with limits
// changed by change; its log (info and above) is returned.
func hostileServer(t *testing.T, change func(*policy.Limits)) (*server.Server, *hostileLog) {
	t.Helper()
	if testing.Short() {
		t.Skip("hostile-input test")
	}
	dir := t.TempDir()
	pol, err := testPolicy("sqlite", filepath.Join(dir, "demo.db"), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pol.Backend.DSN, hostileDemoDB(t), 0o600); err != nil {
		t.Fatal(err)
	}
	if change != nil {
		change(&pol.Limits)
	}
	logs := &hostileLog{}
	srv, err := server.Start(context.Background(), server.Options{
		Policy: pol, Database: demo.Database,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, logs
}

var hostileDemo struct {
	once sync.Once
	db   []byte
	err  error
}

// hostileDemoDB is a demo database filled once for these tests (filling
// takes seconds) and kept in memory; each server gets its own copy.
func hostileDemoDB(t *testing.T) []byte {
	t.Helper()
	hostileDemo.once.Do(func() {
		dir, err := os.MkdirTemp("", "dpproxy-hostile-")
		if err != nil {
			hostileDemo.err = err
			return
		}
		defer os.RemoveAll(dir)
		pol, err := demo.Policy(demo.Options{DataDir: dir})
		if err == nil {
			err = demo.Prepare(context.Background(), pol)
		}
		if err == nil {
			hostileDemo.db, err = os.ReadFile(pol.Backend.DSN)
		}
		hostileDemo.err = err
	})
	if hostileDemo.err != nil {
		t.Fatal(hostileDemo.err)
	}
	return hostileDemo.db
}

// hostileLog collects log output; safe for concurrent writes.
type hostileLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *hostileLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *hostileLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// longestLine is the length of the longest log line.
func (l *hostileLog) longestLine() int {
	n := 0
	for _, line := range strings.Split(l.String(), "\n") {
		n = max(n, len(line))
	}
	return n
}

func hostileMySQL(t *testing.T, addr, user, password string) *sql.DB {
	return hostileMySQLDB(t, addr, user, password, demo.Database)
}

func hostileMySQLDB(t *testing.T, addr, user, password, database string) *sql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = user, password, "tcp", addr, database
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 5*time.Second, 30*time.Second, 30*time.Second
	cfg.AllowNativePasswords = true
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func hostilePGDSN(addr, user, password string) string {
	return hostilePGDSNDB(addr, user, password, demo.Database)
}

func hostilePGDSNDB(addr, user, password, database string) string {
	return fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable&connect_timeout=5", user, password, addr, database)
}

func hostilePG(t *testing.T, addr, user, password string) *sql.DB {
	return hostilePGDB(t, addr, user, password, demo.Database)
}

func hostilePGDB(t *testing.T, addr, user, password, database string) *sql.DB {
	t.Helper()
	db, err := sql.Open("postgres", hostilePGDSNDB(addr, user, password, database))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// selectTwo runs SELECT 1 + 1 on q and checks the answer.
func selectTwo(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) error {
	var n int
	if err := q.QueryRowContext(ctx, "SELECT 1 + 1").Scan(&n); err != nil {
		return err
	}
	if n != 2 {
		return fmt.Errorf("SELECT 1 + 1 = %d", n)
	}
	return nil
}

// waitClosed waits until the server closes c and returns when it did.
func waitClosed(c net.Conn, limit time.Duration) (time.Time, error) {
	c.SetReadDeadline(time.Now().Add(limit))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return time.Time{}, fmt.Errorf("still open after %v", limit)
	}
	return time.Now(), nil
}

// TestHostileSlowloris: connections that never send a handshake are capped
// (max_unauthenticated, over both doors) and closed after
// handshake_timeout; a real client connects and queries on both doors
// while they are open. Before the fix they were kept for idle_timeout (8
// h), uncounted.
func TestHostileSlowloris(t *testing.T) {
	const (
		timeout   = 4 * time.Second
		maxUnauth = 8
		perDoor   = 20
	)
	srv, _ := hostileServer(t, func(l *policy.Limits) {
		l.HandshakeTimeout = policy.Duration{Duration: timeout}
		l.MaxUnauthenticated = maxUnauth
	})
	start := time.Now()
	var raw []net.Conn
	for _, addr := range []string{srv.MySQLAddr(), srv.PostgresAddr()} {
		for range perDoor {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			raw = append(raw, c)
		}
	}
	closedAt := make([]time.Time, len(raw))
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i, c := range raw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			at, err := waitClosed(c, timeout+5*time.Second)
			if err != nil {
				failed.Add(1)
				return
			}
			closedAt[i] = at
		}()
	}

	// Real clients, once the idle handshakes are older than a second
	// (then a newcomer evicts the oldest) and well before the timeout.
	time.Sleep(1200 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	clientStart := time.Now()
	if err := selectTwo(ctx, hostileMySQL(t, srv.MySQLAddr(), "tester", testerPassword)); err != nil {
		t.Fatalf("a MySQL client during the attack: %v", err)
	}
	if err := selectTwo(ctx, hostilePG(t, srv.PostgresAddr(), "tester", testerPassword)); err != nil {
		t.Fatalf("a PostgreSQL client during the attack: %v", err)
	}
	clients := time.Since(clientStart)
	if clients >= timeout-1200*time.Millisecond {
		t.Fatalf("the real clients took %v: they waited for the timeout", clients)
	}

	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d of %d idle connections were still open %v after the handshake timeout", n, len(raw), 5*time.Second)
	}
	var immediate int
	var last time.Duration
	for _, at := range closedAt {
		d := at.Sub(start)
		if d < 500*time.Millisecond {
			immediate++
		}
		last = max(last, d)
	}
	t.Logf("%d idle connections (max_unauthenticated %d, handshake_timeout %v): %d closed within 0.5 s, the last after %v; real clients served in %v",
		len(raw), maxUnauth, timeout, immediate, last.Round(time.Millisecond), clients.Round(time.Millisecond))
	if immediate < len(raw)-maxUnauth {
		t.Errorf("only %d connections over the cap were closed at once, want %d", immediate, len(raw)-maxUnauth)
	}
	if last > timeout+time.Second {
		t.Errorf("the last idle connection was closed after %v, handshake_timeout is %v", last, timeout)
	}
	if n := srv.Admission.Unauthenticated(); n != 0 {
		t.Errorf("%d unauthenticated connections still counted", n)
	}
}

// TestHostileEMFILE runs the real binary with few file descriptors, opens
// connections to both doors until it cannot accept more, and closes them:
// the process must still be alive and serve both doors. Before the fix,
// vitess's accept loop ended on EMFILE and dpproxy exited.
func TestHostileEMFILE(t *testing.T) {
	if testing.Short() {
		t.Skip("hostile-input test")
	}
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit(1) is not installed")
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
	myPort, pgPort := freePort(t), freePort(t)
	config := filepath.Join(dir, "dpproxy.yaml")
	// Caps high enough that only the descriptors run out.
	policyText := fmt.Sprintf(`listen: {mysql: "127.0.0.1:%d", postgres: "127.0.0.1:%d"}
backend: {driver: sqlite, dsn: %q}
ledger: {path: %q}
limits: {max_unauthenticated: 100000, handshake_timeout: 60s}
roles: {analyst: {budget: {epsilon: 3, delta: 1.0e-5}}}
users: {analyst: {password: analyst, role: analyst}}
tables:
  adult:
    privacy_unit: row
    columns:
      age: {type: int, lower: 17, upper: 90}
`, myPort, pgPort, pol.Backend.DSN, filepath.Join(dir, "ledger"))
	if err := os.WriteFile(config, []byte(policyText), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr hostileLog
	cmd := exec.Command(bin, "serve", "--config", config, "--log-level", "warn")
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	waitPort(t, myPort)
	waitPort(t, pgPort)
	pid := cmd.Process.Pid
	base := openFDs(t, pid)
	if base < 0 {
		t.Skip("cannot count the process's descriptors in /proc")
	}
	// A few descriptors to spare: the flood exhausts them at once.
	limit := base + 16
	if out, err := exec.Command(prlimit, "--pid", strconv.Itoa(pid), fmt.Sprintf("--nofile=%d:%d", limit, limit)).CombinedOutput(); err != nil {
		t.Skipf("prlimit: %v %s", err, out)
	}

	var flood []net.Conn
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	for _, port := range []int{myPort, pgPort} {
		for range 100 {
			c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
			if err != nil {
				break // the backlog is full too
			}
			flood = append(flood, c)
		}
	}
	alive := func(when string) {
		t.Helper()
		select {
		case err := <-exited:
			exited <- err // for the cleanup's receive
			t.Fatalf("dpproxy exited %s: %v\n%s", when, err, stderr.String())
		default:
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "too many open files") && time.Now().Before(deadline) {
		alive("while out of descriptors")
		time.Sleep(50 * time.Millisecond)
	}
	alive("while out of descriptors")
	if !strings.Contains(stderr.String(), "too many open files") {
		t.Fatalf("the proxy never ran out of descriptors (%d open, limit %d):\n%s", openFDs(t, pid), limit, stderr.String())
	}
	t.Logf("%d connections opened; the proxy holds %d descriptors of %d (%d at rest)", len(flood), openFDs(t, pid), limit, base)
	time.Sleep(2 * time.Second) // several back-offs
	alive("while out of descriptors")
	for _, c := range flood {
		c.Close()
	}
	flood = nil

	// Both doors serve again once the descriptors are back.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	recovered := time.Now()
	for _, door := range []struct {
		name string
		db   *sql.DB
	}{
		// serve names the SQLite database as SQLite does: main.
		{"MySQL", hostileMySQLDB(t, fmt.Sprintf("127.0.0.1:%d", myPort), "analyst", "analyst", "main")},
		{"PostgreSQL", hostilePGDB(t, fmt.Sprintf("127.0.0.1:%d", pgPort), "analyst", "analyst", "main")},
	} {
		var err error
		for ctx.Err() == nil {
			if err = selectTwo(ctx, door.db); err == nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil {
			alive("after the flood")
			t.Fatalf("%s door after the flood: %v\n%s", door.name, err, stderr.String())
		}
	}
	t.Logf("both doors served %v after the flood was closed", time.Since(recovered).Round(time.Millisecond))
	alive("after the flood")
}

// openFDs counts the descriptors process pid holds (-1 if it cannot).
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return -1
	}
	return len(entries)
}

// rssBytes is this process's resident set size.
func rssBytes(t *testing.T) int64 {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Skip("no VmRSS")
	return 0
}

// rssPeak samples the RSS until stop is called, which returns the largest
// seen.
func rssPeak(t *testing.T) (stop func() int64) {
	var peak atomic.Int64
	peak.Store(rssBytes(t))
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
			if r := rssBytes(t); r > peak.Load() {
				peak.Store(r)
			}
		}
	}()
	return func() int64 {
		close(done)
		<-finished
		return peak.Load()
	}
}

// chunk is what the big messages are made of, written again and again so
// that the client side allocates nothing that would blur the measurement.
var chunk = bytes.Repeat([]byte("x"), 1<<20)

// stream writes n bytes of chunk to w.
func stream(w io.Writer, n int) error {
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := w.Write(chunk[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// hostileRawMySQL is a MySQL client that writes packets itself.
type hostileRawMySQL struct {
	c net.Conn
	r *bufio.Reader
}

func dialRawMySQL(t *testing.T, addr string) *hostileRawMySQL {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(time.Minute))
	return &hostileRawMySQL{c: c, r: bufio.NewReader(c)}
}

func (m *hostileRawMySQL) read() ([]byte, byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(m.r, h[:]); err != nil {
		return nil, 0, err
	}
	p := make([]byte, int(h[0])|int(h[1])<<8|int(h[2])<<16)
	_, err := io.ReadFull(m.r, p)
	return p, h[3], err
}

func (m *hostileRawMySQL) writePacket(payload []byte, seq byte) error {
	h := []byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), seq}
	_, err := m.c.Write(append(h, payload...))
	return err
}

// login answers the greeting with mysql_native_password.
func (m *hostileRawMySQL) login(user, password string) error {
	greeting, _, err := m.read()
	if err != nil {
		return err
	}
	// HandshakeV10: version, NUL, id, 8 bytes of salt, ..., 12 more.
	pos := 1 + bytes.IndexByte(greeting[1:], 0) + 1 + 4
	salt := append(append([]byte{}, greeting[pos:pos+8]...), greeting[pos+8+1+2+1+2+2+1+10:][:12]...)
	const caps = vtmysql.CapabilityClientLongPassword | vtmysql.CapabilityClientProtocol41 |
		vtmysql.CapabilityClientSecureConnection | vtmysql.CapabilityClientPluginAuth
	var p bytes.Buffer
	binary.Write(&p, binary.LittleEndian, uint32(caps))
	binary.Write(&p, binary.LittleEndian, uint32(1<<24))
	p.WriteByte(45)
	p.Write(make([]byte, 23))
	p.WriteString(user + "\x00")
	scramble := vtmysql.ScrambleMysqlNativePassword(salt, []byte(password))
	p.WriteByte(byte(len(scramble)))
	p.Write(scramble)
	p.WriteString(string(vtmysql.MysqlNativePassword) + "\x00")
	if err := m.writePacket(p.Bytes(), 1); err != nil {
		return err
	}
	resp, _, err := m.read()
	if err != nil {
		return err
	}
	if resp[0] != vtmysql.OKPacket {
		return fmt.Errorf("login refused: %q", resp)
	}
	return nil
}

// bigCommand sends a command of n payload bytes (cmd then n-1 bytes of
// chunk), split into packets as the protocol does; it returns the last
// packet's sequence number.
func (m *hostileRawMySQL) bigCommand(cmd byte, n int) (byte, error) {
	seq := byte(0)
	first := true
	for {
		size := min(n, vtmysql.MaxPacketSize)
		if _, err := m.c.Write([]byte{byte(size), byte(size >> 8), byte(size >> 16), seq}); err != nil {
			return seq, err
		}
		body := size
		if first {
			if _, err := m.c.Write([]byte{cmd}); err != nil {
				return seq, err
			}
			body--
			first = false
		}
		if err := stream(m.c, body); err != nil {
			return seq, err
		}
		n -= size
		if size < vtmysql.MaxPacketSize {
			return seq, nil
		}
		seq++
	}
}

// TestHostileBigPackets: a 16 MB handshake response, a 40 MB COM_QUERY, a
// 16 MB PostgreSQL authentication message and a 40 MB PostgreSQL Query
// are refused without the process growing by more than a few MB; the
// authenticated connections survive and the proxy serves. Before the fix
// each was read into memory whole (RSS +500 MB for a few dozen).
func TestHostileBigPackets(t *testing.T) {
	srv, _ := hostileServer(t, nil) // max_statement_bytes: the default, 1 MiB
	ctx := context.Background()
	// Warm up both doors, so that first-use allocations are not counted.
	if err := selectTwo(ctx, hostileMySQL(t, srv.MySQLAddr(), "tester", testerPassword)); err != nil {
		t.Fatal(err)
	}
	if err := selectTwo(ctx, hostilePG(t, srv.PostgresAddr(), "tester", testerPassword)); err != nil {
		t.Fatal(err)
	}
	my := dialRawMySQL(t, srv.MySQLAddr())
	if err := my.login("tester", testerPassword); err != nil {
		t.Fatal(err)
	}
	pc, err := pgconn.Connect(ctx, hostilePGDSN(srv.PostgresAddr(), "tester", testerPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close(ctx)
	pc.Conn().SetDeadline(time.Now().Add(time.Minute))

	runtime.GC()
	debug.FreeOSMemory()
	before := rssBytes(t)
	stop := rssPeak(t)
	const rounds = 3
	for range rounds {
		// MySQL: a handshake response announcing 16 MB.
		hs := dialRawMySQL(t, srv.MySQLAddr())
		if _, _, err := hs.read(); err != nil {
			t.Fatal(err)
		}
		size := vtmysql.MaxPacketSize - 1
		hs.c.Write([]byte{byte(size), byte(size >> 8), byte(size >> 16), 1})
		stream(hs.c, size) // fails part way: the server closes
		if _, err := waitClosed(hs.c, 5*time.Second); err != nil {
			t.Fatalf("16 MB handshake: %v", err)
		}

		// MySQL: a 40 MB COM_QUERY on a logged-in connection.
		last, err := my.bigCommand(vtmysql.ComQuery, 40<<20)
		if err != nil {
			t.Fatalf("40 MB COM_QUERY: %v", err)
		}
		p, seq, err := my.read()
		if err != nil || len(p) < 3 || p[0] != vtmysql.ErrPacket || binary.LittleEndian.Uint16(p[1:]) != 1153 || seq != last+1 {
			t.Fatalf("40 MB COM_QUERY: got %q (seq %d), %v; want error 1153 (seq %d)", p, seq, err, last+1)
		}
		if err := my.writePacket([]byte{vtmysql.ComPing}, 0); err != nil {
			t.Fatal(err)
		}
		if p, _, err := my.read(); err != nil || p[0] != vtmysql.OKPacket {
			t.Fatalf("the connection did not survive a 40 MB COM_QUERY: %q, %v", p, err)
		}

		// PostgreSQL: a SASL response announcing 16 MB.
		raw, err := net.Dial("tcp", srv.PostgresAddr())
		if err != nil {
			t.Fatal(err)
		}
		raw.SetDeadline(time.Now().Add(time.Minute))
		startup, _ := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
			Parameters: map[string]string{"user": "tester", "database": demo.Database}}).Encode(nil)
		raw.Write(startup)
		f := pgproto3.NewFrontend(raw, raw)
		if m, err := f.Receive(); err != nil {
			t.Fatalf("startup: %v", err)
		} else if _, ok := m.(*pgproto3.AuthenticationSASL); !ok {
			t.Fatalf("startup: %T", m)
		}
		hdr := []byte{'p', 0, 0, 0, 0}
		binary.BigEndian.PutUint32(hdr[1:], 16<<20)
		raw.Write(hdr)
		stream(raw, 16<<20-4)
		if _, err := waitClosed(raw, 5*time.Second); err != nil {
			t.Fatalf("16 MB SASL response: %v", err)
		}
		raw.Close()

		// PostgreSQL: a 40 MB Query on a logged-in connection.
		nc := pc.Conn()
		binary.BigEndian.PutUint32(hdr[1:], uint32(4+40<<20+1))
		hdr[0] = 'Q'
		nc.Write(hdr)
		if err := stream(nc, 40<<20); err != nil {
			t.Fatal(err)
		}
		nc.Write([]byte{0})
		m, err := pc.Frontend().Receive()
		if er, ok := m.(*pgproto3.ErrorResponse); err != nil || !ok || er.Code != "54000" {
			t.Fatalf("40 MB Query: got %#v, %v; want 54000", m, err)
		}
		if m, err := pc.Frontend().Receive(); err != nil {
			t.Fatal(err)
		} else if _, ok := m.(*pgproto3.ReadyForQuery); !ok {
			t.Fatalf("after the error: %T", m)
		}
		if _, err := pc.Exec(ctx, "SELECT 1 + 1").ReadAll(); err != nil {
			t.Fatalf("the PostgreSQL connection did not survive a 40 MB Query: %v", err)
		}
	}
	peak := stop()
	runtime.GC()
	debug.FreeOSMemory()
	after := rssBytes(t)
	const mb = 1 << 20
	t.Logf("%d rounds of a 16 MB MySQL handshake, a 40 MB COM_QUERY, a 16 MB PostgreSQL SASL message and a 40 MB Query: RSS %.1f MB before, peak %.1f MB (+%.1f), %.1f MB after (+%.1f)",
		rounds, float64(before)/mb, float64(peak)/mb, float64(peak-before)/mb, float64(after)/mb, float64(after-before)/mb)
	// The slack is the test process's own noise (the race detector, other
	// servers' goroutines): one message read whole would be 16 or 40 MB.
	if peak-before > 16*mb {
		t.Errorf("RSS grew by %.1f MB while refusing the big messages", float64(peak-before)/mb)
	}
	if err := selectTwo(ctx, hostileMySQL(t, srv.MySQLAddr(), "tester", testerPassword)); err != nil {
		t.Fatalf("MySQL door after the big packets: %v", err)
	}
	if err := selectTwo(ctx, hostilePG(t, srv.PostgresAddr(), "tester", testerPassword)); err != nil {
		t.Fatalf("PostgreSQL door after the big packets: %v", err)
	}
}

// TestHostileFailedLogins: 30 logins with a 1 MB user name, then 30 with a
// long (but admissible) one and a wrong password, from 127.0.0.1. The log
// stays bounded; after max_failed_logins (20) failures in a minute the
// address is refused at once with the door's access-denied error and a
// request to wait, on both doors, the right password included: only
// failures count and a success does not reset them (see
// admission.LoginFailed for why).
func TestHostileFailedLogins(t *testing.T) {
	srv, logs := hostileServer(t, nil) // max_failed_logins: the default, 20
	mysql.SetLogger(log.New(io.Discard, "", 0))
	ctx := context.Background()
	huge := strings.Repeat("u", 1<<20)
	for i := range 30 {
		if err := hostileMySQL(t, srv.MySQLAddr(), huge, "wrong").PingContext(ctx); err == nil {
			t.Fatalf("MySQL login %d with a 1 MB user name succeeded", i)
		}
		if err := hostilePG(t, srv.PostgresAddr(), huge, "wrong").PingContext(ctx); err == nil {
			t.Fatalf("PostgreSQL login %d with a 1 MB user name succeeded", i)
		}
	}
	long := strings.Repeat("v", 8000) // under the PostgreSQL startup packet's 10000 bytes
	var firstThrottled int
	var throttledTime time.Duration
	for i := 1; i <= 30; i++ {
		start := time.Now()
		err := hostileMySQL(t, srv.MySQLAddr(), long, "wrong").PingContext(ctx)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1045 {
			t.Fatalf("failed login %d: %v, want 1045", i, err)
		}
		if strings.Contains(me.Message, "wait") {
			if firstThrottled == 0 {
				firstThrottled = i
			}
			throttledTime = max(throttledTime, time.Since(start))
		} else if firstThrottled != 0 {
			t.Fatalf("login %d not throttled after login %d was", i, firstThrottled)
		}
	}
	if firstThrottled != 21 {
		t.Fatalf("the throttle started at failed login %d, want 21", firstThrottled)
	}
	// The right password from the same address: refused too, on both doors.
	err := hostileMySQL(t, srv.MySQLAddr(), "tester", testerPassword).PingContext(ctx)
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1045 || !strings.Contains(me.Message, "wait") {
		t.Fatalf("MySQL login with the right password while throttled: %v", err)
	}
	err = hostilePG(t, srv.PostgresAddr(), "tester", testerPassword).PingContext(ctx)
	if err == nil || !strings.Contains(err.Error(), "28P01") && !strings.Contains(err.Error(), "wait") {
		t.Fatalf("PostgreSQL login with the right password while throttled: %v", err)
	}
	text := logs.String()
	t.Logf("120 hostile logins (60 with a 1 MB user name): %d bytes of log, longest line %d bytes; a throttled refusal took at most %v",
		len(text), logs.longestLine(), throttledTime.Round(time.Millisecond))
	if logs.longestLine() > 1024 {
		t.Errorf("a log line of %d bytes", logs.longestLine())
	}
	if len(text) > 120*1024 {
		t.Errorf("%d bytes of log for 120 logins", len(text))
	}
	if throttledTime > 500*time.Millisecond {
		t.Errorf("a throttled login took %v", throttledTime)
	}
}

// TestHostileMaxConnectionsShared: limits.max_connections is one count
// over both doors. Before the fix each door had its own (512 got in with
// 256 configured).
func TestHostileMaxConnectionsShared(t *testing.T) {
	srv, _ := hostileServer(t, func(l *policy.Limits) { l.MaxConnections = 4 })
	ctx := context.Background()
	dbs := []*sql.DB{
		hostileMySQL(t, srv.MySQLAddr(), "tester", testerPassword),
		hostileMySQL(t, srv.MySQLAddr(), "tester", testerPassword),
		hostilePG(t, srv.PostgresAddr(), "tester", testerPassword),
		hostilePG(t, srv.PostgresAddr(), "tester", testerPassword),
	}
	var held []*sql.Conn
	for _, db := range dbs {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := selectTwo(ctx, c); err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	err := hostileMySQL(t, srv.MySQLAddr(), "tester", testerPassword).PingContext(ctx)
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1040 {
		t.Fatalf("a fifth connection on the MySQL door: %v, want 1040", err)
	}
	err = hostilePG(t, srv.PostgresAddr(), "tester", testerPassword).PingContext(ctx)
	if err == nil || !strings.Contains(err.Error(), "53300") && !strings.Contains(err.Error(), "too many clients") {
		t.Fatalf("a fifth connection on the PostgreSQL door: %v, want 53300", err)
	}
	// A MySQL connection's slot, once closed, serves a PostgreSQL client.
	held[0].Close() // back to its pool
	dbs[0].Close()  // and closed
	deadline := time.Now().Add(5 * time.Second)
	for {
		err = selectTwo(ctx, hostilePG(t, srv.PostgresAddr(), "tester", testerPassword))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the freed slot was not given to the other door: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
