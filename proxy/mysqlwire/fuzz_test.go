package mysqlwire

import (
	"errors"
	"io"
	"log/slog"
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

// drain reads what the server answers until it stops or closes.
func drain(c *rawClient) {
	c.conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	for {
		if _, err := c.read(); err != nil {
			return
		}
	}
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
		drain(c)
		c.seq = 0
		if err := c.write(payload); err != nil && !errors.Is(err, io.EOF) {
			t.Logf("write: %v", err)
		}
		drain(c)
		c.Close()
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
		drain(c)
		c.Close()
		assertServing(t, s)
	})
}
