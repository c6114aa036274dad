// Package mysqlwire is dpproxy's MySQL front door. It speaks the MySQL client
// protocol through vitess's go/mysql (handshake, TLS, packets, prepared
// statement encoding) and hands every statement, unparsed, to the engine's
// Session. It makes no decisions about SQL: it translates.
package mysqlwire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
	vtlog "vitess.io/vitess/go/vt/log"

	"vitess.io/vitess/go/mysql"
	"vitess.io/vitess/go/vt/vtenv"

	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/proxy"
	"github.com/dpproxy/dpproxy/proxy/admission"
)

// Session is what the engine gives one client connection. Its methods are
// never called concurrently for one connection.
type Session interface {
	Execute(ctx context.Context, sql string) (*proxy.Result, error)
	Prepare(ctx context.Context, sql string) (*proxy.Prepared, error)
	ExecutePrepared(ctx context.Context, p *proxy.Prepared, args []proxy.Value) (*proxy.Result, error)
	// Database is the current database, kept across COM_RESET_CONNECTION.
	Database() string
	Close()
}

// Config configures a Server.
type Config struct {
	// Addr is the TCP address to listen on, e.g. "127.0.0.1:3307" (":0"
	// picks a free port; see Server.Addr).
	Addr string
	// LookupUser finds a login by name.
	LookupUser func(name string) (*policy.User, bool)
	// Open starts the engine session of an authenticated user. db is the
	// database the client named in its handshake, or "". An *proxy.Error
	// with CodeUnknownDB reaches the client as error 1049.
	Open func(ctx context.Context, user, db string) (Session, error)
	// ServerVersion is announced in the handshake, e.g. "10.11.0-dpproxy".
	ServerVersion string
	// TLS, if set, is offered to clients, and caching_sha2_password is
	// accepted over it.
	TLS *tls.Config
	// Admission is shared with the other front door: the authenticated
	// connections both count against (a login beyond its MaxConnections
	// gets error 1040 "Too many connections"), the cap and deadline on
	// unauthenticated connections, and the failed-login throttle. nil: one
	// of this door's own, with MaxConnections and DefaultHandshakeTimeout.
	Admission *admission.Admission
	// MaxConnections caps the authenticated client connections when
	// Admission is nil. 0: no cap.
	MaxConnections int
	// MaxStatementBytes caps a command's payload (a COM_QUERY's SQL, a
	// COM_STMT_EXECUTE's parameters) after authentication; a larger one
	// is answered with error 1153 and skipped. 0: DefaultMaxStatementBytes.
	// The wire adds statementSlack to it for the command's own bytes.
	MaxStatementBytes int
	// IdleTimeout closes a connection whose client sent nothing (or read
	// nothing) for that long. 0: never.
	IdleTimeout time.Duration
	// QueryTimeout is each statement's deadline. 0: none.
	QueryTimeout time.Duration
	// Logger receives connection and error logs (nil: slog.Default()).
	Logger *slog.Logger
}

// DefaultHandshakeTimeout bounds authentication when Config.Admission is
// nil, as limits.handshake_timeout's default.
const DefaultHandshakeTimeout = 10 * time.Second

// DefaultMaxStatementBytes is Config.MaxStatementBytes' default, as
// limits.max_statement_bytes'.
const DefaultMaxStatementBytes = policy.DefaultMaxStatementBytes

// statementSlack is what a command may carry beyond its statement text:
// the command byte, a COM_STMT_EXECUTE's statement id, flags, types and
// parameters. The engine checks the statement text itself against the
// limit; the wire only keeps a client from making vitess allocate far more.
const statementSlack = 64 << 10

// Server is a listening MySQL front door.
type Server struct {
	cfg      Config
	log      *slog.Logger
	env      *vtenv.Environment
	listener *mysql.Listener
	adm      *admission.Admission

	// mu guards closed and conns; wg counts tracked connections, and is
	// only added to under mu while !closed, so Close's Wait never races an Add.
	mu     sync.Mutex
	closed bool
	conns  map[*mysql.Conn]*connState
	wg     sync.WaitGroup

	// readerHookFailed is set once installing the statement reader failed,
	// to log that once.
	readerHookFailed atomic.Bool
}

// readBufferSize is vitess's own default; it must be non-zero, because
// vitess resets the buffered reader when a connection switches to TLS.
const readBufferSize = 16 * 1024

// Listen binds cfg.Addr. Call Serve to accept connections.
func Listen(cfg Config) (*Server, error) {
	if cfg.LookupUser == nil || cfg.Open == nil {
		return nil, errors.New("mysqlwire: Config needs LookupUser and Open")
	}
	if cfg.MaxStatementBytes <= 0 {
		cfg.MaxStatementBytes = DefaultMaxStatementBytes
	}
	s := &Server{cfg: cfg, log: cfg.Logger, conns: make(map[*mysql.Conn]*connState), adm: cfg.Admission}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.adm == nil {
		s.adm = admission.New(admission.Config{MaxConnections: cfg.MaxConnections,
			HandshakeTimeout: DefaultHandshakeTimeout, Logger: s.log})
	}
	s.log = s.log.With("frontend", "mysql")
	// vitess logs through its own global slog logger, warning about every
	// failed login that this package already logs. Send its messages to
	// ours, errors only.
	vtlog.SwapLogger(slog.New(errorsOnly{s.log.With("component", "vitess").Handler()}))
	env, err := vtenv.New(vtenv.Options{})
	if err != nil {
		return nil, fmt.Errorf("mysqlwire: set up the vitess environment: %w", err)
	}
	s.env = env

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("mysqlwire: listen on %s: %w", cfg.Addr, err)
	}
	auth := newAuthServer(s.lookup, s.admit, s.adm, cfg.TLS != nil, s.log)
	l, err := mysql.NewListenerWithConfig(mysql.ListenerConfig{
		// Accept retries on EMFILE and the like (vitess's own loop would
		// end, and the door with it), sheds connections beyond
		// max_unauthenticated and closes handshakes that take too long;
		// preAuthConn refuses oversized handshake packets.
		Listener:   &preAuthListener{Listener: s.adm.Listen(ln, "mysql"), tls: cfg.TLS != nil, log: s.log},
		AuthServer: auth,
		Handler:    &handler{s: s},
		// vitess sets the deadline before every read and write, so a
		// client that stays silent for IdleTimeout is disconnected.
		ConnReadTimeout:    cfg.IdleTimeout,
		ConnWriteTimeout:   cfg.IdleTimeout,
		ConnReadBufferSize: readBufferSize,
		FlushDelay:         mysql.DefaultFlushDelay,
		// MultiQuery hands COM_QUERY text to the handler whole; without it
		// vitess would split multi-statements with its own SQL splitter.
		MultiQuery: true,
	})
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("mysqlwire: create the listener: %w", err)
	}
	if cfg.ServerVersion != "" {
		l.ServerVersion = cfg.ServerVersion
	}
	if cfg.TLS != nil {
		l.TLSConfig.Store(cfg.TLS)
	}
	s.listener = l
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.listener.Addr().String() }

// Serve accepts connections until Close; it returns nil after Close.
func (s *Server) Serve() error {
	s.log.Info("mysql front door listening", "addr", s.Addr())
	s.listener.Accept()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	return fmt.Errorf("mysqlwire: stopped accepting connections on %s", s.Addr())
}

// Close stops accepting, cancels the running statements, closes every
// client connection and waits for their sessions to be closed.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	conns := make([]*connState, 0, len(s.conns))
	for _, st := range s.conns {
		conns = append(conns, st)
	}
	s.mu.Unlock()

	// Shutdown also makes COM_PING fail on connections still draining.
	s.listener.Shutdown()
	for _, st := range conns {
		st.cancel()
		st.raw.Close()
	}
	s.wg.Wait()
	return nil
}

// track registers a new connection; it reports false once the server is
// closed.
func (s *Server) track(st *connState) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[st.conn] = st
	s.wg.Add(1)
	return true
}

// untrack forgets a connection that track registered.
func (s *Server) untrack(st *connState) {
	s.mu.Lock()
	_, tracked := s.conns[st.conn]
	delete(s.conns, st.conn)
	s.mu.Unlock()
	if tracked {
		s.wg.Done()
	}
}

// lookup adapts Config.LookupUser to the auth server.
func (s *Server) lookup(name string) (credentials, bool) {
	u, ok := s.cfg.LookupUser(name)
	if !ok || u == nil {
		return nil, false
	}
	return u, true
}

// admit ends the handshake of a client whose password was verified: its
// unauthenticated slot is given back (refused if the handshake deadline
// has passed) and it takes one of the connection slots both doors share.
func (s *Server) admit(c *mysql.Conn) error {
	st, ok := c.ClientData.(*connState)
	if !ok {
		return errInternal
	}
	if st.slot {
		return nil
	}
	if st.adm != nil && !st.adm.Authenticated() {
		return errHandshakeTimeout
	}
	if !s.adm.Acquire() {
		s.log.Warn("mysql connection refused: too many connections", "max", s.adm.MaxConnections())
		return errTooManyConnections
	}
	st.slot = true
	return nil
}

// errorsOnly passes on only records at error level or above, their
// message clipped: vitess quotes packets it could not handle.
type errorsOnly struct{ slog.Handler }

func (h errorsOnly) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelError && h.Handler.Enabled(ctx, l)
}

// maxVitessMessage bounds a vitess log message: long enough for a panic's
// stack, short enough that a client cannot fill the log.
const maxVitessMessage = 8 << 10

func (h errorsOnly) Handle(ctx context.Context, r slog.Record) error {
	if len(r.Message) > maxVitessMessage {
		clipped := slog.NewRecord(r.Time, r.Level, admission.ClipN(r.Message, maxVitessMessage), r.PC)
		r.Attrs(func(a slog.Attr) bool { clipped.AddAttrs(a); return true })
		r = clipped
	}
	return h.Handler.Handle(ctx, r)
}

func (h errorsOnly) WithAttrs(attrs []slog.Attr) slog.Handler {
	return errorsOnly{h.Handler.WithAttrs(attrs)}
}

func (h errorsOnly) WithGroup(name string) slog.Handler { return errorsOnly{h.Handler.WithGroup(name)} }
