// Package admission decides which network connections dpproxy's front doors
// serve, before any SQL is read: one count of authenticated connections
// over both doors (limits.max_connections), a cap on connections still in
// their handshake (limits.max_unauthenticated) with a deadline for it
// (limits.handshake_timeout), a throttle on failed logins per source
// address (limits.max_failed_logins), an accept loop that survives running
// out of file descriptors, and a helper that keeps user-controlled strings
// short in logs.
//
// One Admission is shared by the MySQL and the PostgreSQL door, so that
// neither door can be used to exhaust what the other needs.
package admission

import (
	"container/list"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Config sets an Admission's limits. Zero values turn a limit off.
type Config struct {
	// MaxConnections caps the authenticated connections over both doors.
	MaxConnections int
	// MaxUnauthenticated caps the connections that have not finished
	// authenticating, over both doors. When a connection is accepted
	// beyond it, the oldest handshake is closed if it has taken more than
	// EvictAfter; otherwise the new connection is closed at once, before a
	// byte is read from it.
	//
	// Refusing only new connections would let an attacker hold every slot
	// with MaxUnauthenticated/HandshakeTimeout connections a second (6.4/s
	// with the defaults) and keep every real client out. A real client
	// finishes its handshake in milliseconds; evicting handshakes older
	// than EvictAfter means an attacker must open MaxUnauthenticated
	// connections every EvictAfter to keep a client out, and even then only
	// clients whose handshake is slower than EvictAfter.
	MaxUnauthenticated int
	// EvictAfter is the age beyond which a handshake may be closed to make
	// room for a new connection (default one second, at most
	// HandshakeTimeout).
	EvictAfter time.Duration
	// HandshakeTimeout is how long a connection may take from accept to
	// the end of its authentication; then it is closed.
	HandshakeTimeout time.Duration
	// MaxFailedLogins is how many failed logins one source address may
	// make in FailureWindow before its further attempts are refused without
	// a password check.
	MaxFailedLogins int
	// FailureWindow is the sliding window of MaxFailedLogins (default one
	// minute).
	FailureWindow time.Duration
	// MaxPreAuthBytes caps the bytes read from a connection before it has
	// authenticated, TLS records included (default DefaultMaxPreAuthBytes).
	// A real client's startup, TLS handshake with a client certificate
	// included, is a few kilobytes.
	MaxPreAuthBytes int64
	// Logger receives admission decisions (nil: slog.Default()).
	Logger *slog.Logger

	// now is the clock, for tests (nil: time.Now).
	now func() time.Time
}

// DefaultMaxPreAuthBytes is Config.MaxPreAuthBytes' default.
const DefaultMaxPreAuthBytes = 256 << 10

// MaxHandshakeMessage is the largest single protocol message a door accepts
// before authentication (a MySQL handshake response or auth switch
// response, a PostgreSQL startup, SASL or password message). Real ones are
// well under a kilobyte; 64 KiB leaves room for connection attributes.
const MaxHandshakeMessage = 64 << 10

// Admission is the state both doors share. Its methods are safe for
// concurrent use.
type Admission struct {
	cfg Config
	log *slog.Logger

	authenticated atomic.Int64 // connections holding a MaxConnections slot

	// mu guards pending and every Conn's move out of its handshake.
	mu sync.Mutex
	// pending are the connections in their handshake, oldest first.
	pending list.List

	failures *throttle

	// lastShed rate-limits the warning logged when connections are shed.
	lastShed atomic.Int64
	shed     atomic.Int64
}

// New returns an Admission with cfg's limits.
func New(cfg Config) *Admission {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.FailureWindow <= 0 {
		cfg.FailureWindow = time.Minute
	}
	if cfg.MaxPreAuthBytes <= 0 {
		cfg.MaxPreAuthBytes = DefaultMaxPreAuthBytes
	}
	if cfg.now == nil {
		cfg.now = time.Now
	}
	if cfg.EvictAfter <= 0 {
		cfg.EvictAfter = time.Second
	}
	if cfg.HandshakeTimeout > 0 {
		cfg.EvictAfter = min(cfg.EvictAfter, cfg.HandshakeTimeout)
	}
	return &Admission{
		cfg:      cfg,
		log:      cfg.Logger.With("component", "admission"),
		failures: newThrottle(cfg.MaxFailedLogins, cfg.FailureWindow, cfg.now),
	}
}

// HandshakeTimeout is the configured handshake deadline (0: none).
func (a *Admission) HandshakeTimeout() time.Duration { return a.cfg.HandshakeTimeout }

// MaxConnections is the configured cap on authenticated connections.
func (a *Admission) MaxConnections() int { return a.cfg.MaxConnections }

// Acquire takes an authenticated-connection slot; false when
// MaxConnections are already taken. Each true must be matched by Release.
func (a *Admission) Acquire() bool {
	limit := int64(a.cfg.MaxConnections)
	for {
		n := a.authenticated.Load()
		if limit > 0 && n >= limit {
			return false
		}
		if a.authenticated.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release returns a slot taken by Acquire.
func (a *Admission) Release() {
	if a.authenticated.Add(-1) < 0 {
		panic("admission: Release without Acquire")
	}
}

// Authenticated is the number of slots taken.
func (a *Admission) Authenticated() int { return int(a.authenticated.Load()) }

// Unauthenticated is the number of accepted connections still in their
// handshake.
func (a *Admission) Unauthenticated() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pending.Len()
}

// admitNew registers c as in its handshake, making room if the cap is
// reached by evicting the oldest handshake if it is older than EvictAfter.
// It reports false if there is no room: c must be closed unread.
func (a *Admission) admitNew(c *Conn) bool {
	var evicted *Conn
	a.mu.Lock()
	if limit := a.cfg.MaxUnauthenticated; limit > 0 && a.pending.Len() >= limit {
		oldest := a.pending.Front().Value.(*Conn)
		if a.cfg.now().Sub(oldest.accepted) < a.cfg.EvictAfter {
			a.mu.Unlock()
			return false
		}
		oldest.leaveHandshake(stateExpired)
		evicted = oldest
	}
	c.elem = a.pending.PushBack(c)
	a.mu.Unlock()
	if evicted != nil {
		a.evicting(evicted)
	}
	return true
}

// evicting closes a handshake evicted to make room, and logs it like a
// shed connection.
func (a *Admission) evicting(c *Conn) {
	if c.timer != nil {
		c.timer.Stop()
	}
	c.closeSocket()
	a.shedding(c.door, c.RemoteAddr())
}

// shedding logs that a connection was closed unread, at most once a
// second, with how many were since the last message: a flood must not turn
// into a flood of log lines.
func (a *Admission) shedding(door string, remote net.Addr) {
	n := a.shed.Add(1)
	now := a.cfg.now().UnixNano()
	last := a.lastShed.Load()
	if now-last < int64(time.Second) || !a.lastShed.CompareAndSwap(last, now) {
		return
	}
	a.shed.Add(-n)
	a.log.Warn("connections closed: too many unauthenticated connections",
		"door", door, "max_unauthenticated", a.cfg.MaxUnauthenticated, "closed", n, "last_remote", remote.String())
}

// LoginThrottled reports whether logins from remote are refused for now:
// MaxFailedLogins failed in the last FailureWindow. A door that gets true
// refuses the login with its ordinary access-denied error, without checking
// the password, so that a throttled address learns nothing from a guess.
func (a *Admission) LoginThrottled(remote net.Addr) bool {
	return a.failures.throttled(hostOf(remote))
}

// LoginFailed records a failed password check from remote. It reports
// whether that failure made the address throttled (to log it once).
//
// Only failures count, and a success does not reset them. MySQL's
// connection_control plugin resets its count on a successful login; but
// then an attacker who holds any one valid account could interleave a
// login of their own after every few guesses and guess without end from one
// address. Counting failures in a sliding window, as fail2ban does, bounds
// the guesses per address per window whatever else succeeds, at the price
// that a legitimate user behind the same address is also refused until the
// window has passed (at most FailureWindow after the last failure: refused
// attempts while throttled are not counted, since no password was tried).
func (a *Admission) LoginFailed(remote net.Addr) bool {
	return a.failures.fail(hostOf(remote))
}

// hostOf is the address a throttle counts by: the IP without the port.
func hostOf(remote net.Addr) string {
	if remote == nil {
		return ""
	}
	if tcp, ok := remote.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	s := remote.String()
	if h, _, err := net.SplitHostPort(s); err == nil {
		return h
	}
	return s
}

// throttle counts failures per key in a sliding window.
type throttle struct {
	max    int
	window time.Duration
	now    func() time.Time

	mu   sync.Mutex
	byIP map[string][]time.Time // failure times, oldest first, at most max
}

// maxTracked bounds the addresses a throttle remembers: beyond it, expired
// entries are swept, and if none expired, new addresses are not tracked
// (an attacker with that many addresses is not slowed by a per-address
// throttle anyway, and memory must stay bounded).
const maxTracked = 1 << 16

func newThrottle(max int, window time.Duration, now func() time.Time) *throttle {
	return &throttle{max: max, window: window, now: now, byIP: make(map[string][]time.Time)}
}

// recent drops the failures of key older than the window; callers hold mu.
func (t *throttle) recent(key string, now time.Time) []time.Time {
	times := t.byIP[key]
	i := 0
	for i < len(times) && now.Sub(times[i]) >= t.window {
		i++
	}
	if i == len(times) {
		delete(t.byIP, key)
		return nil
	}
	if i > 0 {
		times = append(times[:0], times[i:]...)
		t.byIP[key] = times
	}
	return times
}

func (t *throttle) throttled(key string) bool {
	if t.max <= 0 {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.recent(key, t.now())) >= t.max
}

func (t *throttle) fail(key string) bool {
	if t.max <= 0 {
		return false
	}
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	times := t.recent(key, now)
	if times == nil && len(t.byIP) >= maxTracked {
		for k := range t.byIP {
			t.recent(k, now)
		}
		if len(t.byIP) >= maxTracked {
			return false
		}
	}
	if len(times) >= t.max {
		// Keep the newest max failures: the window then runs from the
		// oldest of those.
		times = append(times[:0], times[1:]...)
	}
	times = append(times, now)
	t.byIP[key] = times
	return len(times) == t.max
}
