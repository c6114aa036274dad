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
)

// Session is what the engine gives one client connection (*proxy.Session
// satisfies it). Its methods are never called concurrently for one
// connection.
type Session interface {
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
	// MaxConnections caps the authenticated client connections; a login
	// beyond it gets FATAL 53300. 0: no cap.
	MaxConnections int
	// IdleTimeout closes a connection whose client sent nothing for that
	// long. 0: never.
	IdleTimeout time.Duration
	// QueryTimeout is each statement's deadline. 0: none.
	QueryTimeout time.Duration
	// Logger receives connection and error logs (nil: slog.Default()).
	Logger *slog.Logger
	// MaxMessageBytes refuses larger client messages (FATAL 08P01, the
	// connection is closed) before reading them. 0: DefaultMaxMessageBytes.
	MaxMessageBytes int
}

// DefaultServerVersion is server_version when Config.ServerVersion is "".
// 16: the catalogs dpproxy answers from are those of PostgreSQL 16.
const DefaultServerVersion = "16.0 (dpproxy)"

// DefaultMaxMessageBytes bounds one client message: ample for any query or
// a Bind with large text parameters, small enough that a few hundred
// connections cannot exhaust memory with one message each.
const DefaultMaxMessageBytes = 16 << 20

// startupTimeout bounds the time from accept to the end of authentication,
// as PostgreSQL's authentication_timeout (default 1 min).
const startupTimeout = time.Minute

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
	// active counts connections holding a MaxConnections slot.
	active atomic.Int64
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
	s := &Server{cfg: cfg, log: cfg.Logger, conns: make(map[uint32]*conn)}
	if s.log == nil {
		s.log = slog.Default()
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
	s.ln = ln
	return s, nil
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
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("pgwire: accept on %s: %w", s.Addr(), err)
			}
			// Out of file descriptors and the like pass: back off, go on.
			s.log.Warn("postgres accept failed", "error", err)
			time.Sleep(50 * time.Millisecond)
			continue
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

// admit takes a connection slot for an authenticated client.
func (s *Server) admit() bool {
	if s.cfg.MaxConnections <= 0 {
		return true
	}
	for {
		n := s.active.Load()
		if n >= int64(s.cfg.MaxConnections) {
			return false
		}
		if s.active.CompareAndSwap(n, n+1) {
			return true
		}
	}
}
