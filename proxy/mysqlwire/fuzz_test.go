package mysqlwire

import (
	"log/slog"
	"net"
	"testing"
	"time"

	"vitess.io/vitess/go/mysql"
)

// All packet decoding is vitess's; these fuzz the server as a whole with a
// hostile client and check that it keeps serving. Seeds are in
// testdata/fuzz/<FuzzName>.

// quietServer is a server for fuzzing: no logs, a short idle timeout so
// that a command waiting for more input does not pin a goroutine.
func quietServer(f *testing.F) *Server {
	s, e := startServer(f, func(c *Config) {
		c.Logger = slog.New(slog.DiscardHandler)
		c.IdleTimeout = 2 * time.Second
		c.QueryTimeout = 100 * time.Millisecond
	})
	e.t = nil
	return s
}

// assertServing logs in afresh and runs a query.
func assertServing(t *testing.T, s *Server) {
	t.Helper()
	c := loginRaw(t, s)
	p, err := c.command(append([]byte{mysql.ComQuery}, "select 1"...))
	if err != nil {
		t.Fatalf("server stopped serving: %v", err)
	}
	if p[0] != 1 { // a result with one column
		t.Fatalf("select 1 after the fuzz input: %q", p)
	}
}

// finish half-closes the client's side and reads until the server, having
// answered, finds the end of input and closes the connection.
func finish(c *rawClient) {
	c.conn.(*net.TCPConn).CloseWrite()
	for {
		if _, err := c.read(); err != nil {
			break
		}
	}
	c.conn.(*net.TCPConn).SetLinger(0) // no TIME_WAIT pile-up over a long run
	c.Close()
}

// FuzzCommand sends one arbitrary command packet on an authenticated
// connection that has prepared a two-parameter statement (id 1), so that
// COM_STMT_* inputs reach parameter decoding and the engine.
func FuzzCommand(f *testing.F) {
	s := quietServer(f)
	f.Fuzz(func(t *testing.T, payload []byte) {
		c := loginRaw(t, s)
		p, err := c.command(append([]byte{mysql.ComPrepare}, "select ?, ?"...))
		if err != nil || p[0] != mysql.OKPacket {
			t.Fatalf("prepare: %q, %v", p, err)
		}
		// Two parameter definitions and an EOF follow the OK.
		for range 3 {
			if _, err := c.read(); err != nil {
				t.Fatalf("prepare: %v", err)
			}
		}
		c.seq = 0
		c.write(payload)
		finish(c)
		assertServing(t, s)
	})
}

// FuzzHandshake answers the server's handshake with arbitrary bytes.
func FuzzHandshake(f *testing.F) {
	s := quietServer(f)
	f.Fuzz(func(t *testing.T, response []byte) {
		c, err := dialRaw(s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.read(); err != nil {
			t.Fatalf("read handshake: %v", err)
		}
		c.write(response)
		finish(c)
		assertServing(t, s)
	})
}
