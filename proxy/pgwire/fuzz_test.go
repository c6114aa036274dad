package pgwire

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// These feed raw bytes to a running server, as a hostile client would,
// and check that it answers, closes that connection only, and keeps
// serving others. Seeds are in testdata/fuzz/<FuzzName>.

// quietServer is a server for fuzzing: no logs, short timeouts so that an
// input waiting for more bytes does not pin a goroutine, a small message
// limit so that a length header cannot make it allocate much.
func quietServer(f *testing.F) *Server {
	s, e := startServer(f, withTLS(f), func(c *Config) {
		c.Logger = slog.New(slog.DiscardHandler)
		c.IdleTimeout = 2 * time.Second
		c.QueryTimeout = 100 * time.Millisecond
		c.MaxMessageBytes = 1 << 20
	})
	e.t = nil
	return s
}

// drain half-closes the client's side and reads until the server closes
// the connection; it fails if the server neither answers nor closes.
func drain(t *testing.T, c net.Conn) {
	t.Helper()
	c.(*net.TCPConn).CloseWrite()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	// A reset is a close too: the server closed with input unread.
	var ne net.Error
	if _, err := io.Copy(io.Discard, c); errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server did not close the connection: %v", err)
	}
	c.(*net.TCPConn).SetLinger(0) // no TIME_WAIT pile-up over a long run
	c.Close()
}

// assertServing logs in afresh and runs a query.
func assertServing(t *testing.T, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pc, err := pgconn.Connect(ctx, dsn(s, "alice:"+alicePassword, "sslmode=disable"))
	if err != nil {
		t.Fatalf("server stopped serving: %v", err)
	}
	defer pc.Close(ctx)
	res := pc.ExecParams(ctx, "select 1", nil, nil, nil, nil).Read()
	if res.Err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != "1" {
		t.Fatalf("select 1 after the fuzz input: %v %q", res.Err, res.Rows)
	}
}

// FuzzStartup sends arbitrary bytes as the first thing on a connection:
// startup packets, SSL/GSS/cancel requests and whatever follows them.
func FuzzStartup(f *testing.F) {
	s := quietServer(f)
	f.Fuzz(func(t *testing.T, input []byte) {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(input); err != nil {
			t.Fatal(err)
		}
		drain(t, c)
		assertServing(t, s)
	})
}

// FuzzMessages sends arbitrary bytes on an authenticated connection, where
// they are decoded as protocol messages.
func FuzzMessages(f *testing.F) {
	s := quietServer(f)
	f.Fuzz(func(t *testing.T, input []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		pc, err := pgconn.Connect(ctx, dsn(s, "bob:"+bobPassword, "sslmode=disable"))
		if err != nil {
			t.Fatal(err)
		}
		c := pc.Conn()
		if _, err := c.Write(input); err != nil {
			t.Fatal(err)
		}
		drain(t, c)
		assertServing(t, s)
	})
}
