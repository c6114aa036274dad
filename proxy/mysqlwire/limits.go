package mysqlwire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"reflect"
	"unsafe"

	"vitess.io/vitess/go/mysql"
	"vitess.io/vitess/go/mysql/sqlerror"
	"vitess.io/vitess/go/netutil"

	"github.com/dpproxy/dpproxy/proxy/admission"
)

// vitess reads a packet by reading its 4-byte header and then allocating
// the length the header announces (up to 16 MiB per packet, and any number
// of packets for one command), before a single byte of the body has
// arrived. It has no size limit of its own. So the limits are enforced
// beneath it, on the byte stream, where a header can be seen before vitess
// sees it:
//
//   - before authentication, preAuthConn (the accepted socket as vitess
//     sees it) refuses any packet longer than admission.MaxHandshakeMessage
//     by closing the connection: a handshake response is a few hundred
//     bytes. Once a client has asked for TLS the packets are encrypted and
//     cannot be seen there; admission.Conn's pre-auth byte budget and the
//     handshake deadline bound what such a client can make vitess read.
//   - after authentication, stmtReader sits between vitess's buffered
//     reader and the connection (above TLS), and answers a command longer
//     than the statement limit with ER_NET_PACKET_TOO_LARGE without passing
//     it on.

// maxPacketPayload is the MySQL protocol's largest packet payload; a packet
// of exactly this length is continued by the next.
const maxPacketPayload = mysql.MaxPacketSize

// errPacketTooLarge is returned by reads that found an oversized packet;
// the connection is closed.
var errPacketTooLarge = errors.New("mysqlwire: packet too large")

// preAuthListener wraps each accepted connection in a preAuthConn.
type preAuthListener struct {
	*admission.Listener
	tls bool
	log *slog.Logger
}

func (l *preAuthListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &preAuthConn{Conn: nc.(*admission.Conn), tls: l.tls, log: l.log, first: true}, nil
}

// preAuthConn checks the packet headers a client sends before it has
// authenticated; afterwards it passes bytes through.
type preAuthConn struct {
	*admission.Conn
	tls bool // the server offers TLS
	log *slog.Logger

	hdr       [4]byte
	hdrN      int
	remaining int  // body bytes of the current packet still to come
	first     bool // in the first packet (the handshake response)
	flags     [4]byte
	flagsN    int
	opaque    bool // the client switched to TLS: no more plaintext headers
}

func (c *preAuthConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.opaque || !c.Conn.InHandshake() {
		return n, err
	}
	if serr := c.scan(p[:n]); serr != nil {
		c.log.Warn("mysql handshake packet too large; closing", "remote", c.RemoteAddr().String(), "error", serr)
		c.Conn.Close()
		return 0, serr
	}
	return n, err
}

// scan follows the packet framing through b, a piece of the stream.
func (c *preAuthConn) scan(b []byte) error {
	for len(b) > 0 && !c.opaque {
		if c.remaining > 0 {
			k := min(c.remaining, len(b))
			if c.first && c.flagsN < 4 {
				c.flagsN += copy(c.flags[c.flagsN:], b[:k])
			}
			c.remaining -= k
			b = b[k:]
			if c.remaining == 0 {
				c.endPacket()
			}
			continue
		}
		k := copy(c.hdr[c.hdrN:], b)
		c.hdrN += k
		b = b[k:]
		if c.hdrN < 4 {
			continue
		}
		c.hdrN = 0
		length := int(c.hdr[0]) | int(c.hdr[1])<<8 | int(c.hdr[2])<<16
		if length > admission.MaxHandshakeMessage {
			return fmt.Errorf("%w: a handshake packet of %d bytes (the limit is %d)", errPacketTooLarge, length, admission.MaxHandshakeMessage)
		}
		c.remaining = length
		if length == 0 {
			c.endPacket()
		}
	}
	return nil
}

// endPacket notes the end of a packet: after a first packet that asks for
// TLS (an SSLRequest), vitess switches to TLS, and the rest is ciphertext.
func (c *preAuthConn) endPacket() {
	if !c.first {
		return
	}
	c.first = false
	if c.tls && c.flagsN == 4 && binary.LittleEndian.Uint32(c.flags[:])&mysql.CapabilityClientSSL != 0 {
		c.opaque = true
	}
}

// stmtReader passes the packets of an authenticated client to vitess and
// refuses commands whose payload exceeds max: it reads the oversized
// command's packets and drops them as they arrive (nothing is allocated
// for them), answers ER_NET_PACKET_TOO_LARGE with the sequence number the
// client expects, and goes on with the next command, so the connection
// survives. MySQL itself closes the connection after that error; draining
// instead lets the client read a clear error and keep its session.
//
// It is safe to write the error from the reading side: vitess reads the
// next command only after it has flushed the answer to the previous one.
type stmtReader struct {
	src io.Reader // the client's bytes: what vitess had buffered, then the connection
	dst io.Writer // the connection, for the error
	max int
	log *slog.Logger

	pendBuf   [5]byte
	pending   []byte // header (and command byte) not yet handed to vitess
	remaining int    // body bytes of the current packet still to pass
	cont      bool   // the current packet is continued by the next
	total     int    // payload of the current command so far
	longData  int    // COM_STMT_SEND_LONG_DATA bytes since the last execute
}

// Read implements io.Reader for vitess's buffered reader.
func (r *stmtReader) Read(p []byte) (int, error) {
	for {
		if len(r.pending) > 0 {
			n := copy(p, r.pending)
			r.pending = r.pending[n:]
			return n, nil
		}
		if r.remaining > 0 {
			n, err := r.src.Read(p[:min(len(p), r.remaining)])
			r.remaining -= n
			return n, err
		}
		if err := r.next(); err != nil {
			return 0, err
		}
	}
}

// readHeader reads one packet header.
func (r *stmtReader) readHeader() (length int, seq byte, err error) {
	var h [4]byte
	if _, err := io.ReadFull(r.src, h[:]); err != nil {
		return 0, 0, err // io.EOF stays io.EOF: vitess treats it as a client that left
	}
	return int(h[0]) | int(h[1])<<8 | int(h[2])<<16, h[3], nil
}

// next reads the next packet's header and decides: pass it on, or drop
// the whole command and answer the error.
func (r *stmtReader) next() error {
	length, seq, err := r.readHeader()
	if err != nil {
		return err
	}
	continuation := r.cont
	r.cont = length == maxPacketPayload
	if !continuation {
		r.total = 0
	}
	r.total += length
	if r.total > r.max {
		if continuation {
			// Only when max is beyond one packet: part of this command is
			// already vitess's, so it cannot be skipped. Close.
			r.refuse(seq, r.total)
			return fmt.Errorf("%w: a command of more than %d bytes", errPacketTooLarge, r.max)
		}
		return r.skip(length, seq)
	}
	r.pending = r.pendBuf[:4]
	binary.LittleEndian.PutUint32(r.pendBuf[:], uint32(length))
	r.pendBuf[3] = seq
	r.remaining = length
	if continuation || length == 0 {
		return nil
	}
	// The command byte: COM_STMT_SEND_LONG_DATA accumulates parameter bytes
	// in vitess's memory, packet after packet, with no answer to any.
	if _, err := io.ReadFull(r.src, r.pendBuf[4:5]); err != nil {
		return unexpectedEOF(err)
	}
	r.pending = r.pendBuf[:5]
	r.remaining--
	switch r.pendBuf[4] {
	case mysql.ComStmtSendLongData:
		r.longData += length
		if r.longData > r.max {
			r.log.Warn("mysql long data over the statement limit; closing", "bytes", r.longData, "max", r.max)
			return fmt.Errorf("%w: %d bytes of long data", errPacketTooLarge, r.longData)
		}
	case mysql.ComStmtExecute, mysql.ComStmtReset, mysql.ComStmtClose:
		r.longData = 0
	}
	return nil
}

// skip drops the command that starts with a packet of length bytes and
// answers ER_NET_PACKET_TOO_LARGE.
func (r *stmtReader) skip(length int, seq byte) error {
	total := 0
	for {
		if _, err := io.CopyN(io.Discard, r.src, int64(length)); err != nil {
			return unexpectedEOF(err)
		}
		total += length
		if length < maxPacketPayload {
			break
		}
		var err error
		if length, seq, err = r.readHeader(); err != nil {
			return unexpectedEOF(err)
		}
	}
	r.cont = false
	r.log.Warn("mysql command over the statement limit refused", "bytes", total, "max", r.max)
	return r.refuse(seq, total)
}

// refuse writes ER_NET_PACKET_TOO_LARGE as the answer to a command whose
// last packet had sequence number seq.
func (r *stmtReader) refuse(seq byte, size int) error {
	msg := fmt.Sprintf("statement of %d bytes exceeds the limit of %d bytes (limits.max_statement_bytes)", size, r.max)
	payload := make([]byte, 0, 9+len(msg))
	payload = append(payload, mysql.ErrPacket)
	payload = binary.LittleEndian.AppendUint16(payload, uint16(sqlerror.ERNetPacketTooLarge))
	payload = append(payload, '#')
	payload = append(payload, sqlerror.SSNetError...)
	payload = append(payload, msg...)
	packet := make([]byte, 4, 4+len(payload))
	binary.LittleEndian.PutUint32(packet, uint32(len(payload)))
	packet[3] = seq + 1
	packet = append(packet, payload...)
	if _, err := r.dst.Write(packet); err != nil {
		return fmt.Errorf("mysqlwire: answering an oversized command: %w", err)
	}
	return nil
}

func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// installStmtReader puts a stmtReader between c's buffered reader and its
// connection. vitess exposes neither its reader nor a hook on the command
// stream above TLS, so the *bufio.Reader is taken from the unexported
// field it reads commands from; TestStmtReaderInstalls fails if a vitess
// upgrade moves it. Call it on the connection's goroutine, between
// commands (ConnectionReady).
func installStmtReader(c *mysql.Conn, maxPayload int, log *slog.Logger) error {
	br, err := bufferedReader(c)
	if err != nil {
		return err
	}
	nc := c.GetRawConn() // the TLS connection, or vitess's timeout wrapper of the socket
	var src io.Reader = nc
	if n := br.Buffered(); n > 0 {
		// Bytes a client sent right behind its authentication: keep them,
		// in front of the connection, and check them too.
		head, _ := br.Peek(n)
		src = io.MultiReader(bytes.NewReader(bytes.Clone(head)), nc)
	}
	br.Reset(&stmtReader{src: src, dst: nc, max: maxPayload, log: log})
	return nil
}

var bufioReaderType = reflect.TypeOf((*bufio.Reader)(nil))

// bufferedReader is vitess's *bufio.Reader of c.
func bufferedReader(c *mysql.Conn) (*bufio.Reader, error) {
	f := reflect.ValueOf(c).Elem().FieldByName("bufferedReader")
	if !f.IsValid() || f.Type() != bufioReaderType {
		return nil, errors.New("mysqlwire: vitess's mysql.Conn has no bufferedReader *bufio.Reader field (vitess upgraded?)")
	}
	br := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(*bufio.Reader)
	if br == nil {
		return nil, errors.New("mysqlwire: the connection reads unbuffered (ConnReadBufferSize 0)")
	}
	return br, nil
}

// admissionConn finds the admission.Conn beneath vitess's wrappers of the
// accepted socket.
func admissionConn(nc net.Conn) *admission.Conn {
	for range 4 {
		switch c := nc.(type) {
		case netutil.ConnWithTimeouts:
			nc = c.Conn
		case *preAuthConn:
			return c.Conn
		case interface{ NetConn() net.Conn }:
			nc = c.NetConn()
		default:
			return admission.Unwrap(nc)
		}
	}
	return nil
}
