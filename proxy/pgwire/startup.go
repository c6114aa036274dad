package pgwire

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/dpproxy/dpproxy/proxy"
	"github.com/dpproxy/dpproxy/proxy/admission"
)

// Request codes of the startup packet (protocol.sgml, "Message Formats").
const (
	codeSSLRequest    = 80877103
	codeGSSENCRequest = 80877104
	codeCancelRequest = 80877102
	protocolMajor3    = 3
)

// maxStartupPacket is PostgreSQL's MAX_STARTUP_PACKET_LENGTH.
const maxStartupPacket = 10000

// startup runs the startup phase: SSL/GSS negotiation, the startup
// message, authentication and the session. It reports whether the
// connection goes on to queries.
func (c *conn) startup() bool {
	// The admission timer closes the socket at the same moment; the
	// deadline makes the reads fail with a timeout that can be reported.
	deadline := time.Now().Add(c.s.handshakeTimeout())
	_ = c.nc.SetDeadline(deadline)
	var startup *pgproto3.StartupMessage
	for startup == nil {
		msg, err := readStartupPacket(c.nc)
		if err != nil {
			c.startupFailed(err)
			return false
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest:
			if !c.negotiateTLS(deadline) {
				return false
			}
		case *pgproto3.GSSEncRequest:
			// No GSSAPI encryption: 'N', and the client goes on (libpq then
			// tries SSL or plain text).
			if !c.write([]byte{'N'}) {
				return false
			}
		case *pgproto3.CancelRequest:
			c.s.cancelRequest(m.ProcessID, m.SecretKey)
			return false
		case *pgproto3.StartupMessage:
			startup = m
		}
	}
	c.rd = &msgReader{r: c.nc}
	c.be = pgproto3.NewBackend(c.rd, c.nc)
	// Authentication messages are small: a larger one ends the connection
	// before it is buffered.
	c.be.SetMaxBodyLen(admission.MaxHandshakeMessage)
	c.negotiateProtocol(startup)

	params := startup.Parameters
	c.user = params["user"]
	c.log = c.log.With(admission.String("user", c.user))
	if c.user == "" {
		c.fatal(errorf("28000", "no PostgreSQL user name specified in startup packet"))
		return false
	}
	if err := c.authenticate(); err != nil {
		if !errors.Is(err, errClientGone) {
			c.fatal(err)
		}
		return false
	}
	if c.adm != nil && !c.adm.Authenticated() {
		return false // the handshake deadline closed the connection
	}
	if !c.s.admit() {
		c.log.Warn("postgres connection refused: too many connections", "max", c.s.adm.MaxConnections())
		c.fatal(errorf(stateTooManyConns, "sorry, too many clients already"))
		return false
	}
	c.slot = true
	// From now on a message over the statement limit is dropped and
	// answered (msgReader); SetMaxBodyLen stays as a second line.
	c.rd.max = c.s.cfg.MaxMessageBytes
	c.be.SetMaxBodyLen(c.s.cfg.MaxMessageBytes)
	if err := c.open(params); err != nil {
		c.log.Warn("cannot open session", admission.Error(err))
		c.fatal(err)
		return false
	}
	key, err := newSecretKey()
	if err != nil {
		c.fatal(err)
		return false
	}
	c.mu.Lock()
	c.key, c.keySet = key, true
	c.mu.Unlock()

	c.be.Send(&pgproto3.AuthenticationOk{})
	for _, p := range c.parameterStatus(params) {
		c.be.Send(&pgproto3.ParameterStatus{Name: p[0], Value: p[1]})
	}
	c.be.Send(&pgproto3.BackendKeyData{ProcessID: c.pid, SecretKey: key[:]})
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: c.txStatus})
	if !c.flush() {
		return false
	}
	_ = c.nc.SetDeadline(time.Time{})
	c.log.Debug("postgres connection ready", admission.String("database", params["database"]), "tls", c.tls)
	return true
}

// open starts the engine session.
func (c *conn) open(params map[string]string) error {
	_, err := c.guard("open", func(ctx context.Context) (*proxy.Result, error) {
		sess, err := c.s.cfg.Open(ctx, c.user, params["database"], params)
		if err != nil {
			return nil, err
		}
		if sess == nil {
			return nil, fmt.Errorf("pgwire: the engine opened no session for %s", c.user)
		}
		c.session = sess
		return nil, nil
	})
	return err
}

// parameterStatus is what drivers expect to learn on connect: pgjdbc
// insists on UTF8 and an ISO DateStyle, libpq reads server_version and
// standard_conforming_strings to quote, and integer_datetimes decides how
// binary timestamps are read. dpproxy speaks UTF-8 only: client_encoding
// is UTF8 whatever the client asked for.
func (c *conn) parameterStatus(params map[string]string) [][2]string {
	return [][2]string{
		{"server_version", c.s.cfg.ServerVersion},
		{"server_encoding", "UTF8"},
		{"client_encoding", "UTF8"},
		{"DateStyle", "ISO, MDY"},
		{"IntervalStyle", "postgres"},
		{"integer_datetimes", "on"},
		{"standard_conforming_strings", "on"},
		{"TimeZone", "UTC"},
		{"application_name", params["application_name"]},
		{"is_superuser", "off"},
		{"session_authorization", c.user},
	}
}

// negotiateTLS answers an SSLRequest: 'S' and a TLS handshake when TLS is
// configured, 'N' otherwise. The startup packets are read without
// buffering, so no byte the client sent before the handshake can be taken
// as if it came over TLS (CVE-2021-23214).
func (c *conn) negotiateTLS(deadline time.Time) bool {
	if c.tls {
		c.fatal(errorf(stateProtocol, "SSLRequest over an encrypted connection"))
		return false
	}
	if c.s.cfg.TLS == nil {
		return c.write([]byte{'N'})
	}
	if !c.write([]byte{'S'}) {
		return false
	}
	tc := tls.Server(c.raw, c.s.cfg.TLS)
	ctx, cancel := context.WithDeadline(c.ctx, deadline)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		c.log.Info("postgres TLS handshake failed", "remote", c.raw.RemoteAddr().String(), admission.Error(err))
		return false
	}
	c.nc = tc
	c.tls = true
	return true
}

// negotiateProtocol accepts any 3.x client as 3.0: a newer minor version,
// or "_pq_." options, are answered with NegotiateProtocolVersion, which
// such clients understand (protocol.sgml, "Protocol Versions").
func (c *conn) negotiateProtocol(m *pgproto3.StartupMessage) {
	var unknown []string
	for k := range m.Parameters {
		if strings.HasPrefix(k, "_pq_.") {
			unknown = append(unknown, k)
		}
	}
	if m.ProtocolVersion&0xffff == 0 && len(unknown) == 0 {
		return
	}
	c.be.Send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: unknown})
}

// startupFailed answers a bad startup packet and logs it.
func (c *conn) startupFailed(err error) {
	var pe *pgError
	switch {
	case errors.As(err, &pe):
		c.log.Info("postgres startup refused", "remote", c.raw.RemoteAddr().String(), admission.Error(err))
		c.fatal(pe)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		// Probes and clients that changed their mind (libpq after 'N'
		// with sslmode=require) close without a word.
		c.log.Debug("postgres client left during startup")
	default:
		c.log.Info("postgres startup failed", "remote", c.raw.RemoteAddr().String(), admission.Error(err))
	}
}

// readStartupPacket reads one length-prefixed startup packet straight from
// r, with no read-ahead, and decodes it with pgproto3.
func readStartupPacket(r io.Reader) (pgproto3.FrontendMessage, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	n := int(int32(binary.BigEndian.Uint32(head[:])))
	if n < 8 || n > maxStartupPacket {
		return nil, fatalf(stateProtocol, "invalid length of startup packet: %d", n)
	}
	body := make([]byte, n-4)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	code := binary.BigEndian.Uint32(body)
	var msg pgproto3.FrontendMessage
	switch {
	case code == codeSSLRequest:
		msg = &pgproto3.SSLRequest{}
	case code == codeGSSENCRequest:
		msg = &pgproto3.GSSEncRequest{}
	case code == codeCancelRequest:
		msg = &pgproto3.CancelRequest{}
	case code>>16 == protocolMajor3:
		// Decode accepts only 3.0 and 3.2; a client of 3.1 or 3.3+ is
		// still served as 3.0 (see negotiateProtocol).
		binary.BigEndian.PutUint32(body, pgproto3.ProtocolVersion30)
		m := &pgproto3.StartupMessage{}
		if err := m.Decode(body); err != nil {
			return nil, fatalf(stateProtocol, "invalid startup packet: %v", err)
		}
		m.ProtocolVersion = code
		return m, nil
	default:
		return nil, fatalf(stateUnsupported, "unsupported frontend protocol %d.%d: server supports 3.0", code>>16, code&0xffff)
	}
	if err := msg.Decode(body); err != nil {
		return nil, fatalf(stateProtocol, "invalid startup packet: %v", err)
	}
	return msg, nil
}
