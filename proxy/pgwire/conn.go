package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/dpproxy/dpproxy/proxy"
	"github.com/dpproxy/dpproxy/proxy/admission"
)

// Transaction status bytes of ReadyForQuery.
const (
	txIdle = 'I'
	txInTx = 'T'
)

// flushThreshold is how many bytes of rows may be buffered before they are
// written even without a Sync or Flush, so that a pipeline of large
// results does not pile up in memory.
const flushThreshold = 64 << 10

// conn is one client connection. Its goroutine (serve) owns every field
// but the ones under mu, which CancelRequest and Server.Close reach from
// other goroutines.
type conn struct {
	s   *Server
	raw net.Conn // the accepted socket, beneath TLS
	nc  net.Conn // raw, or the TLS connection over it
	// adm is raw as admission sees it: it holds an unauthenticated slot
	// and the handshake deadline until authentication ends (nil if the
	// listener is not admission's).
	adm *admission.Conn
	rd  *msgReader // beneath be: drops messages over the statement limit
	pid uint32
	log *slog.Logger

	ctx    context.Context // cancelled when the connection ends
	cancel context.CancelFunc

	mu         sync.Mutex
	stmtCancel context.CancelCauseFunc // the running statement's, or nil
	key        [4]byte                 // BackendKeyData secret, checked by CancelRequest
	keySet     bool                    // key was drawn and sent

	be       *pgproto3.Backend // after the startup packet
	user     string
	tls      bool
	slot     bool // holds a MaxConnections slot
	session  Session
	stmts    map[string]*statement
	portals  map[string]*portal
	txStatus byte
	// skipping discards extended-protocol messages after an error until
	// the next Sync, as PostgreSQL does.
	skipping bool
	// unflushed counts row bytes sent since the last flush.
	unflushed int
}

func newConn(s *Server, nc net.Conn, pid uint32) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &conn{
		s: s, raw: nc, nc: nc, pid: pid, adm: admission.Unwrap(nc),
		log:      s.log.With("pid", pid),
		ctx:      ctx,
		cancel:   cancel,
		stmts:    make(map[string]*statement),
		portals:  make(map[string]*portal),
		txStatus: txIdle,
	}
	return c
}

// serve runs the connection to its end. A panic in this package's own
// code is logged and ends this connection only.
func (c *conn) serve() {
	defer c.finish()
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("postgres connection panicked", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	if !c.startup() {
		return
	}
	c.loop()
}

// finish releases everything the connection held.
func (c *conn) finish() {
	c.cancel()
	if c.session != nil {
		sess := c.session
		c.session = nil
		_, _ = c.guard("close", func(context.Context) (*proxy.Result, error) {
			sess.Close()
			return nil, nil
		})
	}
	if c.slot {
		c.s.adm.Release()
		c.slot = false
	}
	c.nc.Close()
	c.raw.Close()
	c.s.forget(c)
}

// keyMatches checks a CancelRequest's secret key, in constant time. No
// key matches before the connection has sent its own.
func (c *conn) keyMatches(key []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.keySet && subtle.ConstantTimeCompare(key, c.key[:]) == 1
}

// cancelStatement cancels the running statement, if any (CancelRequest).
func (c *conn) cancelStatement() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stmtCancel != nil {
		c.stmtCancel(context.Canceled)
	}
}

// guard runs f with the statement's context: the connection's, with the
// QueryTimeout deadline, cancelled by a CancelRequest. A panic in the
// engine is an engine bug: it is logged with its stack and the client gets
// XX000 on a connection that stays usable.
func (c *conn) guard(op string, f func(ctx context.Context) (*proxy.Result, error)) (res *proxy.Result, err error) {
	ctx, cancelCause := context.WithCancelCause(c.ctx)
	cancelTimeout := context.CancelFunc(func() {})
	if d := c.s.cfg.QueryTimeout; d > 0 {
		ctx, cancelTimeout = context.WithTimeout(ctx, d)
	}
	c.mu.Lock()
	c.stmtCancel = cancelCause
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.stmtCancel = nil
		c.mu.Unlock()
		cancelTimeout()
		cancelCause(nil)
	}()
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("engine panicked", "op", op,
				"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			res, err = nil, errInternal
		}
	}()
	return f(ctx)
}

// call runs one engine call on the session.
func (c *conn) call(op string, f func(ctx context.Context, sess Session) (*proxy.Result, error)) (*proxy.Result, error) {
	sess := c.session
	return c.guard(op, func(ctx context.Context) (*proxy.Result, error) { return f(ctx, sess) })
}

// loop reads and answers messages until the client leaves.
func (c *conn) loop() {
	for {
		if d := c.s.cfg.IdleTimeout; d > 0 {
			_ = c.nc.SetReadDeadline(time.Now().Add(d))
		}
		msg, err := c.be.Receive()
		if err != nil {
			c.receiveFailed(err)
			return
		}
		if _, ok := msg.(*pgproto3.Terminate); ok {
			return
		}
		if _, ok := msg.(*pgproto3.Flush); ok {
			if o := c.rd.takeOversized(); o != nil {
				if !c.handleOversized(o) {
					return
				}
				continue
			}
		}
		if c.skipping {
			if _, ok := msg.(*pgproto3.Sync); !ok {
				continue
			}
		}
		if !c.handle(msg) {
			return
		}
	}
}

// handle answers one message; false ends the connection.
func (c *conn) handle(msg pgproto3.FrontendMessage) bool {
	switch m := msg.(type) {
	case *pgproto3.Query:
		return c.simpleQuery(m.String)
	case *pgproto3.Parse:
		c.extended(c.parse(m))
	case *pgproto3.Bind:
		c.extended(c.bind(m))
	case *pgproto3.Describe:
		c.extended(c.describe(m))
	case *pgproto3.Execute:
		c.extended(c.execute(m))
	case *pgproto3.Close:
		c.extended(c.closeObject(m))
	case *pgproto3.Sync:
		c.sync()
		return c.flush()
	case *pgproto3.Flush:
		return c.flush()
	case *pgproto3.FunctionCall:
		c.sendError(errorf(stateUnsupported, "the function call protocol is not supported"))
		c.be.Send(&pgproto3.ReadyForQuery{TxStatus: c.txStatus})
		return c.flush()
	case *pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
		// Outside COPY these are ignored, as PostgreSQL does.
	default:
		c.fatal(errorf(stateProtocol, "unexpected message %T", msg))
		return false
	}
	if c.unflushed > flushThreshold {
		return c.flush()
	}
	return true
}

// extended finishes an extended-protocol message: on error, send it and
// discard messages until Sync.
func (c *conn) extended(err error) {
	if err == nil {
		return
	}
	c.sendError(err)
	c.skipping = true
}

// receiveFailed ends the connection after a read error: silently when the
// client went away, with FATAL 08P01 when it sent something malformed.
func (c *conn) receiveFailed(err error) {
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		c.log.Debug("postgres client disconnected")
	case errors.As(err, &ne) && ne.Timeout():
		c.log.Info("postgres connection idle too long, closing", "idle_timeout", c.s.cfg.IdleTimeout)
		c.fatal(fatalf("57P05", "terminating connection due to idle-session timeout"))
	default:
		var tooBig *pgproto3.ExceededMaxBodyLenErr
		if errors.As(err, &tooBig) {
			c.log.Warn("postgres message too large", "bytes", tooBig.ActualBodyLen, "max", tooBig.MaxExpectedBodyLen)
			c.fatal(fatalf(stateProtocol, "message of %d bytes exceeds the limit of %d", tooBig.ActualBodyLen, tooBig.MaxExpectedBodyLen))
			return
		}
		c.log.Warn("postgres malformed message", admission.Error(err))
		c.fatal(fatalf(stateProtocol, "invalid frontend message: %v", err))
	}
}

// sendError queues an ErrorResponse for err.
func (c *conn) sendError(err error) {
	pe := toPGError(err)
	if pe.state == stateInternal {
		c.log.Error("statement failed", admission.Error(err))
	}
	c.be.Send(pe.message())
}

// fatal sends a FATAL error and flushes; the caller closes the connection.
func (c *conn) fatal(err error) {
	pe := toPGError(err)
	pe.fatal = true
	if c.be == nil {
		b, encErr := pe.message().Encode(nil)
		if encErr == nil {
			c.write(b)
		}
		return
	}
	c.be.Send(pe.message())
	c.flush()
}

// write writes raw bytes during startup, before the Backend exists.
func (c *conn) write(b []byte) bool {
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.writeTimeout()))
	_, err := c.nc.Write(b)
	return err == nil
}

// flush writes what is queued; false if the client is gone.
func (c *conn) flush() bool {
	c.unflushed = 0
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.writeTimeout()))
	if err := c.be.Flush(); err != nil {
		c.log.Debug("postgres write failed", "error", err)
		return false
	}
	return true
}

// writeTimeout bounds a write to a client that does not read.
func (c *conn) writeTimeout() time.Duration {
	if d := c.s.cfg.IdleTimeout; d > 0 {
		return d
	}
	return c.s.handshakeTimeout()
}

// newSecretKey draws the BackendKeyData secret.
func newSecretKey() ([4]byte, error) {
	var k [4]byte
	if _, err := rand.Read(k[:]); err != nil {
		return k, fmt.Errorf("pgwire: draw a cancel key: %w", err)
	}
	return k, nil
}
