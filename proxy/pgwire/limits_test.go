package pgwire

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/dpproxy/dpproxy/proxy/admission"
)

// TestOversizedMessageInExtendedProtocol: a dropped Parse is an error
// like any other in the extended protocol: skip to Sync, then go on.
func TestOversizedMessageInExtendedProtocol(t *testing.T) {
	s, _ := startServer(t, func(c *Config) { c.MaxMessageBytes = 1024 })
	w := openWire(t, s)
	w.send(
		&pgproto3.Parse{Query: "select " + strings.Repeat("x", 4096)},
		&pgproto3.Bind{},
		&pgproto3.Execute{},
		&pgproto3.Query{String: strings.Repeat("y", 4096)}, // skipped too
		&pgproto3.Sync{},
		&pgproto3.Parse{Query: "select 1"},
		&pgproto3.Bind{},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	)
	w.expect("ErrorResponse:54000", "ReadyForQuery:I",
		"ParseComplete", "BindComplete", "DataRow", "CommandComplete:SELECT 1", "ReadyForQuery:I")
}

// startupMessage is a v3 StartupMessage for user.
func startupMessage(user string) []byte {
	b, _ := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters: map[string]string{"user": user, "database": "demo"}}).Encode(nil)
	return b
}

// TestOversizedAuthMessageCloses: before authentication, a message over
// 64 KiB ends the connection before it is read.
func TestOversizedAuthMessageCloses(t *testing.T) {
	s, _ := startServer(t)
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Write(startupMessage("alice")); err != nil {
		t.Fatal(err)
	}
	f := pgproto3.NewFrontend(nc, nc)
	if m, err := f.Receive(); err != nil {
		t.Fatal(err)
	} else if _, ok := m.(*pgproto3.AuthenticationSASL); !ok {
		t.Fatalf("got %T", m)
	}
	// A SASLInitialResponse announcing 16 MiB, of which only the header is
	// sent.
	hdr := []byte{'p', 0, 0, 0, 0}
	binary.BigEndian.PutUint32(hdr[1:], 16<<20)
	if _, err := nc.Write(hdr); err != nil {
		t.Fatal(err)
	}
	m, err := f.Receive()
	if err != nil {
		t.Fatalf("no error message: %v", err)
	}
	if er, ok := m.(*pgproto3.ErrorResponse); !ok || er.Code != stateProtocol {
		t.Fatalf("got %#v, want 08P01", m)
	}
	if _, err := f.Receive(); err == nil {
		t.Fatal("the connection stayed open")
	}
	connect(t, s, "alice:"+alicePassword, "") // still serving
}

// TestHandshakeTimeoutAndUnauthenticatedCap: connections that never send
// a startup message are capped and closed after the handshake timeout.
func TestHandshakeTimeoutAndUnauthenticatedCap(t *testing.T) {
	adm := admission.New(admission.Config{HandshakeTimeout: 200 * time.Millisecond, MaxUnauthenticated: 2})
	s, _ := startServer(t, func(c *Config) { c.Admission = adm })
	var idle []net.Conn
	for range 3 {
		nc, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		idle = append(idle, nc)
	}
	start := time.Now()
	for i, nc := range idle {
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := nc.Read(make([]byte, 1))
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("connection %d was kept open", i)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("closed after %v", d)
	}
	connect(t, s, "alice:"+alicePassword, "")
	if n := adm.Unauthenticated(); n != 0 {
		t.Fatalf("%d unauthenticated slots still held", n)
	}
}

// TestSlowStartupTimesOut: a client that sends half a startup message is
// closed after the handshake timeout, not after a minute.
func TestSlowStartupTimesOut(t *testing.T) {
	adm := admission.New(admission.Config{HandshakeTimeout: 200 * time.Millisecond})
	s, _ := startServer(t, func(c *Config) { c.Admission = adm })
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	msg := startupMessage("alice")
	nc.Write(msg[:len(msg)/2])
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	_, err = io.ReadAll(nc)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the connection was kept open")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("closed after %v", d)
	}
}

// TestFailedLoginsThrottled: after MaxFailedLogins failures from one
// address the right password is refused too, with 28P01 and a message to
// wait; the log stays short whatever the user name.
func TestFailedLoginsThrottled(t *testing.T) {
	var logs lockedBuffer
	adm := admission.New(admission.Config{MaxFailedLogins: 3})
	s, _ := startServer(t, func(c *Config) {
		c.Admission = adm
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	long := strings.Repeat("u", 8000)
	for i := range 3 {
		_, err := pgx.Connect(context.Background(), dsn(s, long+":wrong", "sslmode=disable"))
		pe := wantState(t, err, stateInvalidPassword)
		if strings.Contains(pe.Message, "wait") {
			t.Fatalf("failure %d already throttled", i+1)
		}
	}
	_, err := pgx.Connect(context.Background(), dsn(s, "alice:"+alicePassword, "sslmode=disable"))
	pe := wantState(t, err, stateInvalidPassword)
	if !strings.Contains(pe.Message, "wait") {
		t.Fatalf("throttled login: %q", pe.Message)
	}
	if logs.Len() > 8<<10 || strings.Contains(logs.String(), strings.Repeat("u", 200)) {
		t.Fatalf("%d bytes of log, user name whole: %v", logs.Len(), strings.Contains(logs.String(), strings.Repeat("u", 200)))
	}
}

// TestSharedAdmission: two doors on one Admission count connections
// together.
func TestSharedAdmission(t *testing.T) {
	adm := admission.New(admission.Config{MaxConnections: 2})
	s1, _ := startServer(t, func(c *Config) { c.Admission = adm })
	s2, _ := startServer(t, func(c *Config) { c.Admission = adm })
	connect(t, s1, "alice:"+alicePassword, "")
	connect(t, s2, "alice:"+alicePassword, "")
	_, err := pgx.Connect(context.Background(), dsn(s1, "alice:"+alicePassword, "sslmode=disable"))
	wantState(t, err, stateTooManyConns)
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
