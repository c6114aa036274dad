package admission

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

func TestSlotsAreSharedAndBounded(t *testing.T) {
	a := New(Config{MaxConnections: 4})
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := 0
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if a.Acquire() {
				mu.Lock()
				got++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if got != 4 || a.Authenticated() != 4 {
		t.Fatalf("%d slots taken (counter %d), want 4", got, a.Authenticated())
	}
	a.Release()
	if !a.Acquire() {
		t.Fatal("a released slot could not be taken again")
	}
	if a.Acquire() {
		t.Fatal("a fifth slot was taken")
	}
}

func TestNoCapWhenZero(t *testing.T) {
	a := New(Config{})
	for range 1000 {
		if !a.Acquire() {
			t.Fatal("MaxConnections 0 refused a connection")
		}
	}
}

// listen starts a wrapped listener and returns it with its address.
func listen(t *testing.T, a *Admission) (*Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := a.Listen(ln, "test")
	t.Cleanup(func() { l.Close() })
	return l, ln.Addr().String()
}

// closedByPeer reports whether c is closed by the other side within d.
func closedByPeer(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := c.Read(make([]byte, 1))
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

func TestUnauthenticatedCapClosesUnread(t *testing.T) {
	a := New(Config{MaxUnauthenticated: 3})
	l, addr := listen(t, a)
	accepted := make(chan *Conn, 16)
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- nc.(*Conn)
		}
	}()
	var clients []net.Conn
	for range 5 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	var held []*Conn
	for range 3 {
		held = append(held, <-accepted)
	}
	// The fourth and fifth are closed by the listener, never returned.
	for _, c := range clients[3:] {
		if !closedByPeer(c, 2*time.Second) {
			t.Fatal("a connection over max_unauthenticated was not closed")
		}
	}
	if n := a.Unauthenticated(); n != 3 {
		t.Fatalf("unauthenticated = %d, want 3", n)
	}
	// Authenticating one frees its slot for the next client.
	if !held[0].Authenticated() {
		t.Fatal("Authenticated failed")
	}
	if n := a.Unauthenticated(); n != 2 {
		t.Fatalf("after Authenticated: %d, want 2", n)
	}
	held[1].Close()
	held[1].Close() // twice: the slot is freed once
	if n := a.Unauthenticated(); n != 1 {
		t.Fatalf("after Close: %d, want 1", n)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-accepted:
	case <-time.After(2 * time.Second):
		t.Fatal("a connection under the cap was not accepted")
	}
	held[0].Close() // authenticated: no unauthenticated slot to give back
	if n := a.Unauthenticated(); n != 2 {
		t.Fatalf("closing an authenticated conn changed the count to %d", n)
	}
}

// TestOldHandshakeIsEvicted: at the cap, a handshake older than
// EvictAfter makes room for a new connection, so that connections opened
// and left idle cannot keep real clients out for the whole timeout.
func TestOldHandshakeIsEvicted(t *testing.T) {
	a := New(Config{MaxUnauthenticated: 2, EvictAfter: 200 * time.Millisecond, HandshakeTimeout: time.Minute})
	l, addr := listen(t, a)
	var clients []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
		nc, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
	}
	// Young handshakes are kept: the newcomer is closed.
	young, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer young.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		nc, err := l.Accept()
		if err == nil {
			accepted <- nc
		}
	}()
	if !closedByPeer(young, 2*time.Second) {
		t.Fatal("a connection over the cap was kept while the others were young")
	}
	time.Sleep(300 * time.Millisecond)
	late, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	select {
	case nc := <-accepted:
		defer nc.Close()
	case <-time.After(2 * time.Second):
		t.Fatal("no room was made for a new connection")
	}
	if !closedByPeer(clients[0], 2*time.Second) {
		t.Fatal("the oldest handshake was not closed")
	}
	if closedByPeer(clients[1], 100*time.Millisecond) {
		t.Fatal("the second handshake was closed too")
	}
	if n := a.Unauthenticated(); n != 2 {
		t.Fatalf("%d unauthenticated, want 2", n)
	}
}

func TestHandshakeTimeoutClosesTheConnection(t *testing.T) {
	a := New(Config{HandshakeTimeout: 100 * time.Millisecond})
	l, addr := listen(t, a)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	nc, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = nc.Read(make([]byte, 10)) // the server side waits for a handshake
	if !errors.Is(err, ErrHandshakeTimeout) {
		t.Fatalf("read error %v, want ErrHandshakeTimeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %v", d)
	}
	if !closedByPeer(c, 2*time.Second) {
		t.Fatal("the client's side was not closed")
	}
	if a.Unauthenticated() != 0 {
		t.Fatal("the expired connection kept its slot")
	}
	if nc.(*Conn).Authenticated() {
		t.Fatal("an expired connection authenticated")
	}
	nc.Close()
	if a.Unauthenticated() != 0 {
		t.Fatal("closing an expired connection freed its slot twice")
	}
}

func TestAuthenticatedConnectionHasNoDeadline(t *testing.T) {
	a := New(Config{HandshakeTimeout: 50 * time.Millisecond})
	l, addr := listen(t, a)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	nc, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.(*Conn).Authenticated()
	time.Sleep(150 * time.Millisecond)
	c.Write([]byte("x"))
	buf := make([]byte, 1)
	if _, err := nc.Read(buf); err != nil {
		t.Fatalf("an authenticated connection was closed: %v", err)
	}
}

func TestPreAuthBytesAreBounded(t *testing.T) {
	a := New(Config{MaxPreAuthBytes: 1000})
	l, addr := listen(t, a)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go c.Write(make([]byte, 5000))
	nc, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	n, err := io.Copy(io.Discard, nc)
	if !errors.Is(err, errPreAuthTooLarge) || n != 1000 {
		t.Fatalf("read %d bytes, %v; want 1000 and errPreAuthTooLarge", n, err)
	}
}

// flakyListener fails Accept with errs, one per call, then delegates.
type flakyListener struct {
	net.Listener
	mu   sync.Mutex
	errs []error
}

func (f *flakyListener) Accept() (net.Conn, error) {
	f.mu.Lock()
	if len(f.errs) > 0 {
		err := f.errs[0]
		f.errs = f.errs[1:]
		f.mu.Unlock()
		return nil, err
	}
	f.mu.Unlock()
	return f.Listener.Accept()
}

func TestAcceptSurvivesEMFILE(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	var errs []error
	for range 12 {
		errs = append(errs, emfile)
	}
	errs = append(errs, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.ENFILE)},
		&net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.ECONNABORTED)})
	fl := &flakyListener{Listener: ln, errs: errs}
	l := New(Config{}).Listen(fl, "test")
	defer l.Close()
	var delays []time.Duration
	l.sleep = func(d time.Duration) { delays = append(delays, d) }

	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err == nil {
			defer c.Close()
			time.Sleep(time.Second)
		}
	}()
	nc, err := l.Accept()
	if err != nil {
		t.Fatalf("Accept gave up: %v", err)
	}
	nc.Close()
	want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000, 1000, 1000, 1000}
	if len(delays) != len(want) {
		t.Fatalf("delays %v", delays)
	}
	for i, d := range delays {
		if d != want[i]*time.Millisecond {
			t.Fatalf("delays %v, want %v ms", delays, want)
		}
	}

	// A closed listener ends Accept.
	l.Close()
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v", err)
	}
}

func TestTemporary(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EMFILE)}, true},
		{&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ENFILE)}, true},
		{&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ECONNABORTED)}, true},
		{fmt.Errorf("wrapped: %w", syscall.ENOBUFS), true},
		{net.ErrClosed, false},
		{&net.OpError{Op: "accept", Err: net.ErrClosed}, false},
		{errors.New("something else"), false},
	} {
		if got := Temporary(tc.err); got != tc.want {
			t.Errorf("Temporary(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestFailedLoginThrottle(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	a := New(Config{MaxFailedLogins: 3, now: clock.now})
	attacker := &net.TCPAddr{IP: net.ParseIP("192.0.2.1"), Port: 5000}
	samePort := &net.TCPAddr{IP: net.ParseIP("192.0.2.1"), Port: 6000}
	other := &net.TCPAddr{IP: net.ParseIP("192.0.2.2"), Port: 5000}

	for i := range 3 {
		if a.LoginThrottled(attacker) {
			t.Fatalf("throttled after %d failures", i)
		}
		became := a.LoginFailed(attacker)
		if became != (i == 2) {
			t.Fatalf("failure %d: became throttled = %v", i+1, became)
		}
		clock.add(10 * time.Second)
	}
	if !a.LoginThrottled(attacker) || !a.LoginThrottled(samePort) {
		t.Fatal("not throttled after 3 failures (the port must not matter)")
	}
	if a.LoginThrottled(other) {
		t.Fatal("another address is throttled")
	}
	// Sliding window: the first failure (at 0 s) leaves it at 60 s; now is
	// 30 s.
	clock.add(29 * time.Second)
	if !a.LoginThrottled(attacker) {
		t.Fatal("throttle lifted early")
	}
	clock.add(time.Second)
	if a.LoginThrottled(attacker) {
		t.Fatal("throttle still on after the oldest failure left the window")
	}
	a.LoginFailed(attacker)
	if !a.LoginThrottled(attacker) {
		t.Fatal("one more failure inside the window must throttle again")
	}
	clock.add(time.Minute)
	if a.LoginThrottled(attacker) {
		t.Fatal("still throttled a window after the last failure")
	}
	// An address whose failures have all expired is forgotten.
	if n := len(a.failures.byIP); n != 0 {
		t.Fatalf("%d addresses still tracked", n)
	}
}

func TestThrottleOffWhenZero(t *testing.T) {
	a := New(Config{})
	addr := &net.TCPAddr{IP: net.ParseIP("192.0.2.1")}
	for range 100 {
		a.LoginFailed(addr)
	}
	if a.LoginThrottled(addr) {
		t.Fatal("max_failed_logins 0 throttled")
	}
}

func TestThrottleConcurrent(t *testing.T) {
	a := New(Config{MaxFailedLogins: 20})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			addr := &net.TCPAddr{IP: net.IPv4(10, 0, 0, byte(i%4))}
			for range 50 {
				a.LoginThrottled(addr)
				a.LoginFailed(addr)
			}
		}()
	}
	wg.Wait()
	for i := range 4 {
		if !a.LoginThrottled(&net.TCPAddr{IP: net.IPv4(10, 0, 0, byte(i))}) {
			t.Fatal("not throttled")
		}
	}
}

func TestClip(t *testing.T) {
	if Clip("alice") != "alice" {
		t.Fatal("a short string was changed")
	}
	long := strings.Repeat("x", 4<<20)
	got := Clip(long)
	if len(got) > MaxLoggedBytes+32 || !strings.HasPrefix(got, strings.Repeat("x", MaxLoggedBytes)) ||
		!strings.HasSuffix(got, fmt.Sprintf("[%d bytes]", 4<<20)) {
		t.Fatalf("Clip of 4 MiB: %d bytes, %q...", len(got), got[:40])
	}
	// A multi-byte rune across the cut is not split.
	s := strings.Repeat("a", MaxLoggedBytes-1) + "é" + strings.Repeat("b", 10)
	if got := Clip(s); !utf8.ValidString(got) || !strings.HasPrefix(got, strings.Repeat("a", MaxLoggedBytes-1)+"…") {
		t.Fatalf("Clip split a rune: %q", got)
	}
	if a := String("user", long); len(a.Value.String()) > MaxLoggedBytes+32 {
		t.Fatal("String did not clip")
	}
}
