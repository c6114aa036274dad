package mysqlwire

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net"
	"runtime/debug"

	"vitess.io/vitess/go/mysql"
	"vitess.io/vitess/go/sqltypes"

	"github.com/dpproxy/dpproxy/proxy"
	"github.com/dpproxy/dpproxy/proxy/admission"
)

// connState is one client connection's engine side, kept in the vitess
// Conn's ClientData. vitess calls a connection's handler methods one at a
// time, so only cancel and raw are touched from another goroutine (Close).
type connState struct {
	s    *Server
	conn *mysql.Conn
	// raw is the accepted socket (beneath TLS). Close closes it rather
	// than conn, whose socket vitess replaces during a TLS handshake.
	raw net.Conn
	// adm is the accepted connection as admission sees it: it holds an
	// unauthenticated slot and a handshake deadline until admit. nil when
	// the listener is not admission's (never in a Server).
	adm    *admission.Conn
	log    *slog.Logger
	ctx    context.Context // cancelled when the connection ends
	cancel context.CancelFunc

	ready   bool    // the handshake is over
	slot    bool    // holds a MaxConnections slot
	session Session // nil until opened
	// openErr is why the session could not be opened after the handshake;
	// the next command returns it and the connection is closed.
	openErr error
	// prepared are the engine's statements by SQL text, the key vitess
	// keeps in its PrepareData.
	prepared map[string]*proxy.Prepared
	warnings uint16
}

func newConnState(s *Server, c *mysql.Conn) *connState {
	ctx, cancel := context.WithCancel(context.Background())
	return &connState{
		s:        s,
		conn:     c,
		raw:      c.GetRawConn(),
		adm:      admissionConn(c.GetRawConn()),
		log:      s.log.With("conn", c.ConnectionID),
		ctx:      ctx,
		cancel:   cancel,
		prepared: make(map[string]*proxy.Prepared),
	}
}

// open starts the engine session for the authenticated user.
func (st *connState) open(db string) error {
	return st.call("open", func(ctx context.Context) error {
		sess, err := st.s.cfg.Open(ctx, st.conn.User, db)
		if err != nil {
			return err
		}
		if sess == nil {
			return fmt.Errorf("mysqlwire: the engine opened no session for %s", st.conn.User)
		}
		st.session = sess
		return nil
	})
}

// closeSession closes the engine session, if any.
func (st *connState) closeSession() {
	if st.session == nil {
		return
	}
	sess := st.session
	st.session = nil
	clear(st.prepared)
	_ = st.call("close", func(context.Context) error {
		sess.Close()
		return nil
	})
}

// statement runs one client command against the session and returns the
// error as the client must see it (nil or an *sqlerror.SQLError).
func (st *connState) statement(op string, f func(ctx context.Context, sess Session) error) error {
	st.warnings = 0
	if st.session == nil {
		err := st.openErr
		if err == nil {
			err = fmt.Errorf("mysqlwire: no session")
		}
		// The client learns why its session could not start, then the
		// connection ends: there is nothing it could run on it.
		st.conn.MarkForClose()
		return wireError(err)
	}
	sess := st.session
	return wireError(st.call(op, func(ctx context.Context) error { return f(ctx, sess) }))
}

// call runs f with the statement deadline. A panic in the engine is an
// engine bug: it is logged with its stack and the client gets error 1105
// "internal error" on a connection that stays usable.
func (st *connState) call(op string, f func(ctx context.Context) error) (err error) {
	ctx, cancel := st.ctx, context.CancelFunc(func() {})
	if d := st.s.cfg.QueryTimeout; d > 0 {
		ctx, cancel = context.WithTimeout(ctx, d)
	}
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			st.log.Error("engine panicked", "op", op, admission.String("user", st.conn.User),
				"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = errInternal
		}
	}()
	return f(ctx)
}

// send converts a result and passes it to vitess, remembering its warnings
// for the EOF/OK packet.
func (st *connState) send(r *proxy.Result, callback func(*sqltypes.Result) error) error {
	qr, err := toResult(r)
	if err != nil {
		st.log.Error("cannot encode the engine's result", "error", err)
		return err
	}
	st.warnings = uint16(min(len(r.Warnings), math.MaxUint16))
	return callback(qr)
}

// wireError returns nil for nil, so that a nil *sqlerror.SQLError never
// becomes a non-nil error interface.
func wireError(err error) error {
	if err == nil {
		return nil
	}
	return toSQLError(err)
}
