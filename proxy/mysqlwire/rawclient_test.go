package mysqlwire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"vitess.io/vitess/go/mysql"
)

// rawClient speaks just enough of the client protocol to log in with
// mysql_native_password and then send arbitrary command packets, for the
// commands go-sql-driver never sends and for fuzzing.
type rawClient struct {
	conn net.Conn
	r    *bufio.Reader
	seq  byte
}

func dialRaw(addr string) (*rawClient, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawClient{conn: conn, r: bufio.NewReader(conn)}, nil
}

// login reads the server handshake and answers it.
func (c *rawClient) login(user, password string) error {
	hs, err := c.read()
	if err != nil {
		return fmt.Errorf("read handshake: %w", err)
	}
	salt, err := handshakeSalt(hs)
	if err != nil {
		return err
	}
	const caps = mysql.CapabilityClientLongPassword | mysql.CapabilityClientProtocol41 |
		mysql.CapabilityClientSecureConnection | mysql.CapabilityClientPluginAuth | mysql.CapabilityClientTransactions
	var p bytes.Buffer
	binary.Write(&p, binary.LittleEndian, uint32(caps))
	binary.Write(&p, binary.LittleEndian, uint32(1<<24))
	p.WriteByte(45) // utf8mb4_general_ci
	p.Write(make([]byte, 23))
	p.WriteString(user + "\x00")
	scramble := mysql.ScrambleMysqlNativePassword(salt, []byte(password))
	p.WriteByte(byte(len(scramble)))
	p.Write(scramble)
	p.WriteString(string(mysql.MysqlNativePassword) + "\x00")
	if err := c.write(p.Bytes()); err != nil {
		return err
	}
	resp, err := c.read()
	if err != nil {
		return fmt.Errorf("read auth result: %w", err)
	}
	if resp[0] != mysql.OKPacket {
		return fmt.Errorf("login failed: %q", resp)
	}
	return nil
}

// handshakeSalt extracts the 20-byte nonce from a HandshakeV10 packet.
func handshakeSalt(p []byte) ([]byte, error) {
	end := bytes.IndexByte(p[1:], 0)
	if len(p) < 1 || p[0] != 10 || end < 0 {
		return nil, errors.New("not a HandshakeV10 packet")
	}
	pos := 1 + end + 1 + 4 // version, connection id
	if len(p) < pos+8+1+2+1+2+2+1+10+12 {
		return nil, errors.New("short HandshakeV10 packet")
	}
	salt := append([]byte(nil), p[pos:pos+8]...)
	pos += 8 + 1 + 2 + 1 + 2 + 2 + 1 + 10
	return append(salt, p[pos:pos+12]...), nil
}

// command sends one command packet and returns the first response packet.
func (c *rawClient) command(payload []byte) ([]byte, error) {
	c.seq = 0
	if err := c.write(payload); err != nil {
		return nil, err
	}
	return c.read()
}

func (c *rawClient) write(payload []byte) error {
	hdr := []byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), c.seq}
	c.seq++
	_, err := c.conn.Write(append(hdr, payload...))
	return err
}

func (c *rawClient) read() ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
	c.seq = hdr[3] + 1
	p := make([]byte, n)
	if _, err := io.ReadFull(c.r, p); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errors.New("empty packet")
	}
	return p, nil
}

func (c *rawClient) Close() error { return c.conn.Close() }

// errorCode returns the error number of an ERR packet.
func errorCode(p []byte) (uint16, bool) {
	if len(p) < 3 || p[0] != mysql.ErrPacket {
		return 0, false
	}
	return binary.LittleEndian.Uint16(p[1:3]), true
}

func loginRaw(t testing.TB, s *Server) *rawClient {
	t.Helper()
	c, err := dialRaw(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.login("alice", testPassword); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestResetConnectionReopensSession(t *testing.T) {
	s, e := startServer(t, nil)
	c := loginRaw(t, s)
	if p, err := c.command(append([]byte{mysql.ComInitDB}, "shop"...)); err != nil || p[0] != mysql.OKPacket {
		t.Fatalf("COM_INIT_DB: %q, %v", p, err)
	}
	if p, err := c.command([]byte{mysql.ComResetConnection}); err != nil || p[0] != mysql.OKPacket {
		t.Fatalf("COM_RESET_CONNECTION: %q, %v", p, err)
	}
	opened, closed, _, _ := e.snapshot()
	if len(opened) != 2 || opened[1] != "alice/shop" || closed != 1 {
		t.Errorf("after reset: opened %q, closed %d; want a new session in shop and the old one closed", opened, closed)
	}
}

func TestReplicationIsRefused(t *testing.T) {
	s, _ := startServer(t, nil)
	for _, cmd := range []byte{mysql.ComBinlogDump, mysql.ComRegisterReplica} {
		c := loginRaw(t, s)
		// A well-formed COM_BINLOG_DUMP: position, flags, server id, file.
		payload := append([]byte{cmd, 4, 0, 0, 0, 0, 0, 1, 0, 0, 0}, "binlog.000001"...)
		if cmd == mysql.ComRegisterReplica {
			// server id, then empty host, user and password, port, rank, primary id.
			payload = []byte{cmd, 1, 0, 0, 0, 0, 0, 0, 0xea, 0x0c, 0, 0, 0, 0, 0, 0, 0, 0}
		}
		p, err := c.command(payload)
		if err != nil {
			t.Fatalf("command %d: %v", cmd, err)
		}
		if code, ok := errorCode(p); !ok || code != 1235 {
			t.Errorf("command %d: got %q, want error 1235", cmd, p)
		}
	}
}
