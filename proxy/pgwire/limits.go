package pgwire

import (
	"encoding/binary"
	"io"

	"github.com/jackc/pgx/v5/pgproto3"
)

// msgReader sits beneath pgproto3's Backend and follows the message
// framing of what the client sends. Once limited (after authentication),
// a message whose body exceeds max is read and dropped as it arrives,
// never buffered, and pgproto3 is handed an empty Flush in its place;
// takeOversized then tells the connection what was dropped, and the
// connection answers 54000 and goes on. pgproto3's own SetMaxBodyLen fails
// the read instead, leaving the stream in the middle of the message: the
// connection could only be closed.
//
// Before authentication it only passes bytes on: there the Backend's
// SetMaxBodyLen refuses anything over admission.MaxHandshakeMessage and
// the connection is closed, as PostgreSQL closes on an invalid startup.
type msgReader struct {
	r   io.Reader
	max int // 0: no limit

	hdr       [5]byte
	pending   []byte // header bytes not yet handed out
	remaining int    // body bytes of the current message still to pass
	oversized *oversizedMessage
}

// oversizedMessage is a message msgReader dropped.
type oversizedMessage struct {
	typ  byte
	size int // the body's length
}

// flushMessage is what pgproto3 reads in place of a dropped message.
var flushMessage = []byte{'H', 0, 0, 0, 4}

func (m *msgReader) Read(p []byte) (int, error) {
	for {
		if len(m.pending) > 0 {
			n := copy(p, m.pending)
			m.pending = m.pending[n:]
			return n, nil
		}
		if m.remaining > 0 {
			n, err := m.r.Read(p[:min(len(p), m.remaining)])
			m.remaining -= n
			return n, err
		}
		if _, err := io.ReadFull(m.r, m.hdr[:]); err != nil {
			return 0, err
		}
		length := int(int32(binary.BigEndian.Uint32(m.hdr[1:])))
		body := length - 4
		if m.max > 0 && body > m.max {
			if _, err := io.CopyN(io.Discard, m.r, int64(body)); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return 0, err
			}
			m.oversized = &oversizedMessage{typ: m.hdr[0], size: body}
			m.pending = flushMessage
			continue
		}
		// A length below 4 is pgproto3's to refuse.
		m.pending = m.hdr[:]
		m.remaining = max(body, 0)
	}
}

// takeOversized returns the message dropped in place of the Flush just
// received, if any.
func (m *msgReader) takeOversized() *oversizedMessage {
	o := m.oversized
	m.oversized = nil
	return o
}

// stateProgramLimit is SQLSTATE 54000, program_limit_exceeded.
const stateProgramLimit = "54000"

// handleOversized answers a dropped message as PostgreSQL answers any
// error: in the simple protocol with ReadyForQuery, in the extended
// protocol by skipping to the next Sync (while skipping, it is one more
// message skipped).
func (c *conn) handleOversized(o *oversizedMessage) bool {
	if c.skipping {
		return true
	}
	c.log.Warn("postgres message over the statement limit refused", "type", string(o.typ), "bytes", o.size, "max", c.rd.max)
	err := errorf(stateProgramLimit, "message of %d bytes exceeds the limit of %d bytes (limits.max_statement_bytes)", o.size, c.rd.max)
	switch o.typ {
	case 'Q':
		c.sendError(err)
		c.be.Send(&pgproto3.ReadyForQuery{TxStatus: c.txStatus})
		return c.flush()
	case 'S', 'X':
		// Sync and Terminate have no body; a huge one is garbage.
		c.fatal(fatalf(stateProtocol, "invalid frontend message of %d bytes", o.size))
		return false
	default:
		c.extended(err)
		return c.flush()
	}
}
