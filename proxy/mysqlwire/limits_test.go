package mysqlwire

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	vtmysql "vitess.io/vitess/go/mysql"

	"github.com/dpproxy/dpproxy/proxy/admission"
)

// writeCommand sends payload as one command, split into packets of at most
// 16 MiB - 1 as the protocol does, and returns the sequence number of the
// last packet.
func (c *rawClient) writeCommand(payload []byte) (byte, error) {
	c.seq = 0
	var last byte
	for {
		n := min(len(payload), maxPacketPayload)
		last = c.seq
		if err := c.write(payload[:n]); err != nil {
			return last, err
		}
		payload = payload[n:]
		if n < maxPacketPayload {
			return last, nil
		}
	}
}

// readSeq reads one packet and returns it with its sequence number.
func (c *rawClient) readSeq() ([]byte, byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
		return nil, 0, err
	}
	n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
	p := make([]byte, n)
	_, err := io.ReadFull(c.r, p)
	return p, hdr[3], err
}

func comQuery(sql string) []byte { return append([]byte{vtmysql.ComQuery}, sql...) }

// TestOversizedCommandIsSkipped: a command over the statement limit, one
// packet or several, is answered with error 1153 and the sequence number
// the client expects, the engine never sees it, and the connection goes on.
func TestOversizedCommandIsSkipped(t *testing.T) {
	s, e := startServer(t, func(c *Config) { c.MaxStatementBytes = 1000 })
	limit := 1000 + statementSlack
	c := loginRaw(t, s)
	c.conn.SetDeadline(time.Now().Add(time.Minute))
	for _, size := range []int{limit + 1, maxPacketPayload - 1, maxPacketPayload, 2*maxPacketPayload + 10} {
		last, err := c.writeCommand(comQuery("select '" + strings.Repeat("x", size) + "'"))
		if err != nil {
			t.Fatalf("%d bytes: write: %v", size, err)
		}
		p, seq, err := c.readSeq()
		if err != nil {
			t.Fatalf("%d bytes: no answer: %v", size, err)
		}
		if code, ok := errorCode(p); !ok || code != 1153 || !bytes.Contains(p, []byte("limits.max_statement_bytes")) {
			t.Fatalf("%d bytes: got %q, want error 1153", size, p[:min(len(p), 100)])
		}
		if seq != last+1 {
			t.Fatalf("%d bytes: answer has sequence %d, want %d", size, seq, last+1)
		}
		// The connection still works.
		if p, err := c.command([]byte{vtmysql.ComPing}); err != nil || p[0] != vtmysql.OKPacket {
			t.Fatalf("%d bytes: the next command failed: %q, %v", size, p, err)
		}
	}
	// A statement at the limit passes to the engine.
	atLimit := "select '" + strings.Repeat("y", limit-1-len("select ''")) + "'"
	p, err := c.command(comQuery(atLimit))
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := errorCode(p); code == 1153 {
		t.Fatal("a statement at the limit was refused")
	}
	_, _, received, _ := e.snapshot()
	for _, sql := range received {
		if strings.Contains(sql, "xxx") {
			t.Fatalf("the engine received an oversized statement of %d bytes", len(sql))
		}
	}
	if len(received) == 0 || received[len(received)-1] != atLimit {
		t.Fatal("the statement at the limit did not reach the engine")
	}
}

// TestOversizedCommandOverTLS: the limit holds above TLS too.
func TestOversizedCommandOverTLS(t *testing.T) {
	s, _ := startServer(t, func(c *Config) { c.TLS = selfSignedTLS(t); c.MaxStatementBytes = 1000 })
	db, err := sql.Open("mysql", dsn(s, "alice", testPassword, "", map[string]string{"tls": "skip-verify"}))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = conn.ExecContext(context.Background(), "select '"+strings.Repeat("x", 200<<10)+"'")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1153 {
		t.Fatalf("got %v, want error 1153", err)
	}
	var one int
	if err := conn.QueryRowContext(context.Background(), "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("the TLS connection did not survive: %v", err)
	}
}

// TestLongDataIsBounded: COM_STMT_SEND_LONG_DATA, which vitess accumulates
// without answering, cannot pile up more than the statement limit.
func TestLongDataIsBounded(t *testing.T) {
	s, _ := startServer(t, func(c *Config) { c.MaxStatementBytes = 1000 })
	c := loginRaw(t, s)
	// A statement with one parameter, whose id the prepare answer holds.
	p, err := c.command(append([]byte{vtmysql.ComPrepare}, "select ?"...))
	if err != nil || p[0] != vtmysql.OKPacket {
		t.Fatalf("prepare: %q, %v", p, err)
	}
	for { // the parameter definition and its EOF
		p, err := c.read()
		if err != nil {
			t.Fatal(err)
		}
		if p[0] == vtmysql.EOFPacket && len(p) < 9 {
			break
		}
	}
	chunk := append([]byte{vtmysql.ComStmtSendLongData, 0, 0, 0, 0, 0, 0}, make([]byte, 32<<10)...)
	copy(chunk[1:5], p[1:5]) // statement id
	for i := 0; i < 100 && err == nil; i++ {
		c.seq = 0
		err = c.write(chunk)
	}
	// COM_STMT_SEND_LONG_DATA has no answer: the server closes the
	// connection once the long data passes the limit.
	c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for err == nil {
		_, err = c.read()
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("3 MiB of long data were accepted")
	}
}

// TestOversizedHandshakeIsRefused: before authentication, a packet header
// announcing more than 64 KiB closes the connection before vitess reads or
// allocates the body.
func TestOversizedHandshakeIsRefused(t *testing.T) {
	s, _ := startServer(t, nil)
	for _, size := range []int{admission.MaxHandshakeMessage + 1, maxPacketPayload - 1} {
		c, err := dialRaw(s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.read(); err != nil {
			t.Fatal(err)
		}
		hdr := []byte{byte(size), byte(size >> 8), byte(size >> 16), 1}
		if _, err := c.conn.Write(hdr); err != nil {
			t.Fatal(err)
		}
		c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.read(); err == nil {
			t.Fatalf("%d bytes: the server answered", size)
		} else if ne := (net.Error)(nil); errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("%d bytes: the connection was kept open", size)
		}
		c.Close()
	}
	loginRaw(t, s) // still serving
}

// TestHandshakeTimeout: a client that never answers the greeting is
// closed after the handshake timeout and gives back its slot.
func TestHandshakeTimeout(t *testing.T) {
	adm := admission.New(admission.Config{HandshakeTimeout: 200 * time.Millisecond, MaxUnauthenticated: 2})
	s, _ := startServer(t, func(c *Config) { c.Admission = adm })
	var idle []*rawClient
	for range 2 {
		c, err := dialRaw(s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.read(); err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	// The cap is reached: a third is closed before its greeting.
	c3, err := dialRaw(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if _, err := c3.read(); err == nil {
		t.Fatal("a connection over max_unauthenticated was greeted")
	}
	start := time.Now()
	for _, c := range idle {
		c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.read(); !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
			t.Fatalf("idle handshake: %v, want the server to close", err)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("idle handshakes closed after %v", d)
	}
	loginRaw(t, s) // slots given back
	if n := adm.Unauthenticated(); n != 0 {
		t.Fatalf("%d unauthenticated left", n)
	}
}

// TestFailedLoginsThrottled: after MaxFailedLogins failures from one
// address, even the right password is refused, with 1045 and a message to
// wait, and the log stays short whatever the user name's length.
func TestFailedLoginsThrottled(t *testing.T) {
	var logs lockedBuffer
	adm := admission.New(admission.Config{MaxFailedLogins: 3})
	s, _ := startServer(t, func(c *Config) {
		c.Admission = adm
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	long := strings.Repeat("u", 32<<10)
	for i := range 3 {
		err := openDBAs(t, s, long, "wrong").Ping()
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1045 || strings.Contains(me.Message, "wait") {
			t.Fatalf("failure %d: %v", i+1, err)
		}
	}
	err := openDBAs(t, s, "alice", testPassword).Ping()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1045 || !strings.Contains(me.Message, "wait") {
		t.Fatalf("throttled login: got %v, want 1045 telling to wait", err)
	}
	if logs.Len() > 8<<10 {
		t.Fatalf("%d bytes of log for 4 logins", logs.Len())
	}
	if strings.Contains(logs.String(), strings.Repeat("u", 200)) {
		t.Fatal("the user name was logged whole")
	}
}

func openDBAs(t *testing.T, s *Server, user, password string) *sql.DB {
	t.Helper()
	d, err := sql.Open("mysql", dsn(s, user, password, "", nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestStmtReaderInstalls(t *testing.T) {
	s, _ := startServer(t, nil)
	loginRaw(t, s)
	time.Sleep(50 * time.Millisecond)
	if s.readerHookFailed.Load() {
		t.Fatal("the statement reader could not be installed in vitess's Conn")
	}
}

// lockedBuffer is a log sink safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Len() int { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Len() }

func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }
