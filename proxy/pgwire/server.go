// Package pgwire is dpproxy's PostgreSQL front door. It speaks protocol
// version 3 through pgx's pgproto3 codec (startup, TLS, SCRAM-SHA-256,
// the simple and the extended query protocol, cancel requests) and hands
// every statement, unparsed, to the engine's Session. It makes no decisions
// about SQL: it translates.
package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/proxy"
	"github.com/dpproxy/dpproxy/proxy/admission"
)

// Session is what the engine gives one client connection (*proxy.Session
// satisfies it). Its methods are never called concurrently for one
// connection.
type Session interface {
	// Split cuts a simple query's text into its statements (none: answer
	// EmptyQueryResponse), which Execute then runs in turn; an error is
	// the whole query's, before any statement runs.
	Split(sql string) ([]string, error)
	Execute(ctx context.Context, sql string) (*proxy.Result, error)
	// Prepare parses a statement with $n parameters. Prepared.Columns
	// should be set when the result's shape is known without running it:
	// a Describe of a statement with nil Columns is answered NoData.
	Prepare(ctx context.Context, sql string) (*proxy.Prepared, error)
	ExecutePrepared(ctx context.Context, p *proxy.Prepared, args []proxy.Value) (*proxy.Result, error)
	Database() string
	Close()
}

var _ Session = (*proxy.Session)(nil)

// Config configures a Server.
type Config struct {
	// Addr is the TCP address to listen on, e.g. "127.0.0.1:5433" (":0"
	// picks a free port; see Server.Addr).
	Addr string
	// LookupUser finds a login by name.
	LookupUser func(name string) (*policy.User, bool)
	// Open starts the engine session of an authenticated user. database is
	// the startup message's "database" ("" when the client sent none);
	// params are all the startup parameters (application_name, options,
	// DateStyle, ...). An *proxy.Error with CodeUnknownDB reaches the
	// client as FATAL 3D000.
	Open func(ctx context.Context, user, database string, params map[string]string) (Session, error)
	// ServerVersion is announced as server_version (default
	// DefaultServerVersion). Drivers read the leading "major.minor".
	ServerVersion string
	// TLS, if set, answers SSLRequest with 'S'; without it clients are
	// told 'N' and continue in plain text (or give up if they require TLS).
	TLS *tls.Config
	// Admission is shared with the other front door: the authenticated
	// connections both count against (a login beyond its MaxConnections
	// gets FATAL 53300), the cap and deadline on unauthenticated
	// connections, and the failed-login throttle. nil: one of this door's
	// own, with MaxConnections and DefaultHandshakeTimeout.
	Admission *admission.Admission
	// MaxConnections caps the authenticated client connections when
	// Admission is nil. 0: no cap.
	MaxConnections int
	// IdleTimeout closes a connection whose client sent nothing for that
	// long. 0: never.
	IdleTimeout time.Duration
	// QueryTimeout is each statement's deadline. 0: none.
	QueryTimeout time.Duration
	// Logger receives connection and error logs (nil: slog.Default()).
	Logger *slog.Logger
	// MaxMessageBytes refuses larger client messages after
	// authentication: the message is dropped unbuffered as it arrives and
	// answered with 54000, and the connection goes on. 0:
	// DefaultMaxMessageBytes. (Before authentication the limit is
	// admission.MaxHandshakeMessage, and the connection is closed.)
	MaxMessageBytes int
}

// DefaultServerVersion is server_version when Config.ServerVersion is "".
// 16: the catalogs dpproxy answers from are those of PostgreSQL 16.
const DefaultServerVersion = "16.0 (dpproxy)"

// DefaultMaxMessageBytes bounds one client message: limits.max_statement_bytes'
// default and room for a Bind's parameters.
const DefaultMaxMessageBytes = policy.DefaultMaxStatementBytes + StatementSlack

// StatementSlack is what a message may carry beyond its statement text: a
// Parse's name and parameter types, a Bind's parameters. The engine checks
// the statement text itself against limits.max_statement_bytes.
const StatementSlack = 64 << 10

// DefaultHandshakeTimeout bounds the time from accept to the end of
// authentication when Config.Admission is nil, as limits.handshake_timeout
// (PostgreSQL's authentication_timeout is a minute; a proxy in front of
// it has no reason to wait that long for a client's password).
const DefaultHandshakeTimeout = 10 * time.Second

// Server is a listening PostgreSQL front door.
type Server struct {
	cfg Config
	log *slog.Logger
	ln  net.Listener
	// mockSecret seeds the salts of mock SCRAM exchanges for unknown users.
	mockSecret []byte

	// mu guards closed and conns; wg counts live connections and is only
	// added to under mu while !closed, so Close's Wait never races an Add.
	mu     sync.Mutex
	closed bool
	conns  map[uint32]*conn // by process id (BackendKeyData)
	wg     sync.WaitGroup

	nextPID atomic.Uint32
	adm     *admission.Admission
}

// Listen binds cfg.Addr. Call Serve to accept connections.
func Listen(cfg Config) (*Server, error) {
	if cfg.LookupUser == nil || cfg.Open == nil {
		return nil, errors.New("pgwire: Config needs LookupUser and Open")
	}
	if cfg.ServerVersion == "" {
		cfg.ServerVersion = DefaultServerVersion
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	s := &Server{cfg: cfg, log: cfg.Logger, conns: make(map[uint32]*conn), adm: cfg.Admission}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.adm == nil {
		s.adm = admission.New(admission.Config{MaxConnections: cfg.MaxConnections,
			HandshakeTimeout: DefaultHandshakeTimeout, Logger: s.log})
	}
	s.log = s.log.With("frontend", "postgres")
	s.mockSecret = make([]byte, 32)
	if _, err := rand.Read(s.mockSecret); err != nil {
		return nil, fmt.Errorf("pgwire: draw the mock SCRAM secret: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("pgwire: listen on %s: %w", cfg.Addr, err)
	}
	// Accept retries on EMFILE and the like, sheds connections beyond
	// max_unauthenticated and closes handshakes that take too long.
	s.ln = s.adm.Listen(ln, "postgres")
	return s, nil
}

// handshakeTimeout bounds the startup phase.
func (s *Server) handshakeTimeout() time.Duration {
	if d := s.adm.HandshakeTimeout(); d > 0 {
		return d
	}
	return DefaultHandshakeTimeout
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve accepts connections until Close; it returns nil after Close.
func (s *Server) Serve() error {
	s.log.Info("postgres front door listening", "addr", s.Addr())
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			// admission's listener has already retried what passes
			// (EMFILE and the like): this one does not.
			return fmt.Errorf("pgwire: accept on %s: %w", s.Addr(), err)
		}
		c := s.newConn(nc)
		if c == nil {
			nc.Close()
			continue
		}
		go c.serve()
	}
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
	conns := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()

	err := s.ln.Close()
	for _, c := range conns {
		c.cancel()
		c.raw.Close()
	}
	s.wg.Wait()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("pgwire: close the listener: %w", err)
	}
	return nil
}

// newConn registers an accepted socket under a fresh process id; nil once
// the server is closed.
func (s *Server) newConn(nc net.Conn) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	pid := s.nextPID.Add(1)
	for s.conns[pid] != nil || pid == 0 {
		pid = s.nextPID.Add(1)
	}
	c := newConn(s, nc, pid)
	s.conns[pid] = c
	s.wg.Add(1)
	return c
}

// forget removes a finished connection.
func (s *Server) forget(c *conn) {
	s.mu.Lock()
	delete(s.conns, c.pid)
	s.mu.Unlock()
	s.wg.Done()
}

// cancelRequest cancels the running statement of the connection with
// that process id and secret key, as PostgreSQL's processCancelRequest
// does. A wrong key is ignored silently: the requester learns nothing.
func (s *Server) cancelRequest(pid uint32, key []byte) {
	s.mu.Lock()
	c := s.conns[pid]
	s.mu.Unlock()
	if c == nil || !c.keyMatches(key) {
		s.log.Debug("postgres cancel request for no connection", "pid", pid)
		return
	}
	s.log.Debug("postgres cancel request", "pid", pid)
	c.cancelStatement()
}

// admit takes one of the connection slots both doors share, for an
// authenticated client.
func (s *Server) admit() bool { return s.adm.Acquire() }
