package admission

import (
	"container/list"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Accept back-off, as net/http's Server.Serve: 5 ms, doubling, at most 1 s.
const (
	minAcceptDelay = 5 * time.Millisecond
	maxAcceptDelay = time.Second
)

// Listener wraps a door's net.Listener. Its Accept
//
//   - survives temporary errors (out of file descriptors, a connection
//     aborted before it was accepted): it backs off and retries, as
//     net/http's Server.Serve does, so that a flood of connections that
//     exhausts the descriptors cannot end the accept loop and with it the
//     process;
//   - beyond MaxUnauthenticated, closes the oldest handshake if it is
//     older than EvictAfter, or else the new connection, unread;
//   - returns every other connection as a *Conn, which holds an
//     unauthenticated slot and is closed if it has not authenticated within
//     HandshakeTimeout.
type Listener struct {
	net.Listener
	a    *Admission
	door string
	log  *slog.Logger
	// sleep waits between retries; tests replace it.
	sleep func(time.Duration)
}

// Listen wraps ln for the door named door ("mysql", "postgres").
func (a *Admission) Listen(ln net.Listener, door string) *Listener {
	return &Listener{Listener: ln, a: a, door: door, log: a.log.With("door", door), sleep: time.Sleep}
}

// Accept returns the next admitted connection, a *Conn. It returns an error
// only when the listener is closed or fails for good.
func (l *Listener) Accept() (net.Conn, error) {
	var delay time.Duration
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			if !Temporary(err) {
				return nil, err
			}
			if delay == 0 {
				delay = minAcceptDelay
			} else {
				delay = min(2*delay, maxAcceptDelay)
			}
			l.log.Warn("accept failed; retrying", "error", err, "retry_in", delay)
			l.sleep(delay)
			continue
		}
		c := &Conn{Conn: nc, a: l.a, door: l.door, accepted: l.a.cfg.now()}
		if d := l.a.cfg.HandshakeTimeout; d > 0 {
			// A timer rather than a read deadline: vitess sets its own
			// read deadline before every read, and the handshake also
			// covers TLS and the writes of a client that does not read.
			c.timer = time.AfterFunc(d, c.expire)
		}
		if !l.a.admitNew(c) {
			if c.timer != nil {
				c.timer.Stop()
			}
			l.a.shedding(l.door, nc.RemoteAddr())
			c.closeSocket()
			continue
		}
		return c, nil
	}
}

// Temporary reports whether an Accept error will likely pass: the process
// or the system is out of file descriptors or buffers, or the peer gave up
// before the connection was accepted. Like net/http, it also trusts the
// (deprecated but still implemented) Temporary method of net errors.
func Temporary(err error) bool {
	if err == nil || errors.Is(err, net.ErrClosed) {
		return false
	}
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EAGAIN, syscall.EINTR, syscall.EPROTO} {
		if errors.Is(err, errno) {
			return true
		}
	}
	var te interface{ Temporary() bool }
	return errors.As(err, &te) && te.Temporary()
}

// Conn states.
const (
	stateHandshake int32 = iota
	stateAuthenticated
	stateExpired
	stateClosed
)

// Conn is an accepted connection. Until Authenticated is called it holds
// one of the MaxUnauthenticated slots, may read at most MaxPreAuthBytes, and
// is closed when HandshakeTimeout passes.
type Conn struct {
	net.Conn
	a    *Admission
	door string
	// state is read without a lock; it leaves stateHandshake only under
	// a.mu, with elem.
	state atomic.Int32
	elem  *list.Element // in a.pending while in the handshake
	timer *time.Timer
	// preAuth counts bytes read while in the handshake.
	preAuth atomic.Int64
	// closeOnce closes the socket once, whoever gets there first.
	closeOnce sync.Once
	closeErr  error
	accepted  time.Time
}

// ErrHandshakeTimeout is returned by a Conn's reads once its handshake
// deadline has passed.
var ErrHandshakeTimeout = errors.New("admission: handshake timed out")

// errPreAuthTooLarge is returned by a read that exceeds MaxPreAuthBytes.
var errPreAuthTooLarge = errors.New("admission: too many bytes before authentication")

// expire ends a handshake that took too long.
func (c *Conn) expire() {
	c.a.mu.Lock()
	ok := c.leaveHandshake(stateExpired)
	c.a.mu.Unlock()
	if !ok {
		return
	}
	// Debug: one line per idle connection would let a flood write the log.
	c.a.log.Debug("handshake timed out; closing", "door", c.door, "remote", c.RemoteAddr().String(),
		"handshake_timeout", c.a.cfg.HandshakeTimeout)
	c.closeSocket()
}

// leaveHandshake moves c out of its handshake to state, giving back its
// place; false if it had already left. The caller holds c.a.mu.
func (c *Conn) leaveHandshake(state int32) bool {
	if c.state.Load() != stateHandshake {
		return false
	}
	c.state.Store(state)
	if c.elem != nil {
		c.a.pending.Remove(c.elem)
		c.elem = nil
	}
	return true
}

// Authenticated ends the handshake: the connection's unauthenticated slot
// is freed and its deadline dropped. It reports false if the handshake had
// already timed out or the connection was closed; the door must then drop
// the connection.
func (c *Conn) Authenticated() bool {
	c.a.mu.Lock()
	ok := c.leaveHandshake(stateAuthenticated)
	c.a.mu.Unlock()
	if ok && c.timer != nil {
		c.timer.Stop()
	}
	return ok
}

// InHandshake reports whether the connection has not yet authenticated
// (and is not closed).
func (c *Conn) InHandshake() bool { return c.state.Load() == stateHandshake }

// Expired reports whether the handshake deadline closed the connection.
func (c *Conn) Expired() bool { return c.state.Load() == stateExpired }

// Read counts the bytes read during the handshake and refuses more than
// MaxPreAuthBytes: nothing a client sends before proving who it is may
// cost more than that.
func (c *Conn) Read(p []byte) (int, error) {
	switch c.state.Load() {
	case stateAuthenticated:
		return c.Conn.Read(p)
	case stateExpired:
		return 0, ErrHandshakeTimeout
	}
	limit := c.a.cfg.MaxPreAuthBytes
	left := limit - c.preAuth.Load()
	if left <= 0 {
		c.closeSocket()
		return 0, fmt.Errorf("%w (%d)", errPreAuthTooLarge, limit)
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := c.Conn.Read(p)
	c.preAuth.Add(int64(n))
	if err != nil && c.state.Load() == stateExpired {
		err = ErrHandshakeTimeout
	}
	return n, err
}

// Close closes the socket and frees the unauthenticated slot if the
// connection still held it.
func (c *Conn) Close() error {
	c.a.mu.Lock()
	ok := c.leaveHandshake(stateClosed)
	c.a.mu.Unlock()
	if ok && c.timer != nil {
		c.timer.Stop()
	}
	return c.closeSocket()
}

func (c *Conn) closeSocket() error {
	c.closeOnce.Do(func() { c.closeErr = c.Conn.Close() })
	return c.closeErr
}

// Unwrap finds the *Conn beneath wrappers that expose the connection they
// wrap (an embedded net.Conn field named Conn, or a NetConn method as
// *tls.Conn has); nil if there is none.
func Unwrap(nc net.Conn) *Conn {
	for range 8 {
		switch c := nc.(type) {
		case *Conn:
			return c
		case interface{ NetConn() net.Conn }:
			nc = c.NetConn()
		default:
			return nil
		}
	}
	return nil
}
