package pgwire

import (
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/proxy/admission"
)

// credentials is what authentication needs of a user; *policy.User
// implements it.
type credentials interface {
	SCRAMVerifier() (salt []byte, iterations int, storedKey, serverKey []byte, ok bool)
	CheckPassword(plain string) bool
}

var _ credentials = (*policy.User)(nil)

// authenticate proves the client is c.user. The rule:
//
//   - SCRAM-SHA-256 for every user who has a SCRAM verifier (a plain
//     password in the policy, or a SCRAM hash), over TLS or not. The
//     password never crosses the wire.
//   - The cleartext password (AuthenticationCleartextPassword) only on a
//     TLS connection, and only for a user with no SCRAM verifier (the
//     policy holds only a MySQL native hash): the one case SCRAM cannot
//     serve. Over plain TCP such a user cannot log in.
//   - An unknown user, or one who could log in only with cleartext over
//     plain TCP, gets a mock SCRAM exchange that fails at the proof, with
//     the same messages, salt per name and work as a real one, and then the
//     same 28P01 as a wrong password.
//
// As with PostgreSQL choosing per user between SCRAM and md5, the method
// offered on a TLS connection tells an observer whether an existing user
// has only a MySQL hash; nothing tells whether a user exists.
func (c *conn) authenticate() error {
	remote := c.raw.RemoteAddr()
	if c.s.adm.LoginThrottled(remote) {
		// No password is asked for, so a throttled address learns nothing
		// from a guess; see admission.LoginFailed for why only failures
		// count.
		c.log.Debug("postgres login refused: address throttled", "remote", remote.String())
		return errorf(stateInvalidPassword, "password authentication failed for user %q: too many failed logins from this address, wait a minute before trying again", admission.Clip(c.user))
	}
	var cred credentials
	if u, ok := c.s.cfg.LookupUser(c.user); ok && u != nil {
		cred = u
	}
	var v scramVerifier
	hasSCRAM := false
	if cred != nil {
		v.salt, v.iterations, v.storedKey, v.serverKey, hasSCRAM = cred.SCRAMVerifier()
	}
	var err error
	switch {
	case hasSCRAM:
		err = c.scram(v, false)
	case cred != nil && c.tls:
		err = c.cleartext(cred)
	default:
		mock, mockErr := mockVerifier(c.s.mockSecret, c.user)
		if mockErr != nil {
			return mockErr
		}
		err = c.scram(mock, true)
	}
	var pe *pgError
	if errors.As(err, &pe) && pe.state == stateInvalidPassword {
		if c.s.adm.LoginFailed(remote) {
			c.log.Warn("postgres logins from this address throttled: too many failures", "remote", remote.String())
		}
		c.log.Warn("postgres login refused", "remote", remote.String(), "tls", c.tls)
	}
	return err
}

// errBadPassword is PostgreSQL's message for every failed login.
func (c *conn) errBadPassword() error {
	return errorf(stateInvalidPassword, "password authentication failed for user %q", admission.Clip(c.user))
}

// scram runs a SCRAM-SHA-256 exchange (see scramServer).
func (c *conn) scram(v scramVerifier, mock bool) error {
	s := newSCRAMServer(v, mock)
	c.be.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{scramMechanism}})
	if err := c.authStep(pgproto3.AuthTypeSASL); err != nil {
		return err
	}
	msg, err := c.be.Receive()
	if err != nil {
		return c.authReceiveError(err)
	}
	initial, ok := msg.(*pgproto3.SASLInitialResponse)
	if !ok {
		return errorf(stateProtocol, "expected SASL response, got %T", msg)
	}
	if initial.AuthMechanism != scramMechanism {
		return errorf(stateProtocol, "client selected an invalid SASL authentication mechanism %q", initial.AuthMechanism)
	}
	serverFirst, err := s.first(initial.Data)
	if err != nil {
		return c.scramError(err)
	}
	c.be.Send(&pgproto3.AuthenticationSASLContinue{Data: serverFirst})
	if err := c.authStep(pgproto3.AuthTypeSASLContinue); err != nil {
		return err
	}
	if msg, err = c.be.Receive(); err != nil {
		return c.authReceiveError(err)
	}
	resp, ok := msg.(*pgproto3.SASLResponse)
	if !ok {
		return errorf(stateProtocol, "expected SASL response, got %T", msg)
	}
	serverFinal, err := s.final(resp.Data)
	if err != nil {
		return c.scramError(err)
	}
	c.be.Send(&pgproto3.AuthenticationSASLFinal{Data: serverFinal})
	return nil
}

func (c *conn) scramError(err error) error {
	var pe *protocolError
	if errors.As(err, &pe) {
		return errorf(stateProtocol, "%s", pe.Error())
	}
	if errors.Is(err, errSCRAMProof) {
		return c.errBadPassword()
	}
	return err
}

// cleartext asks for the password itself; only ever over TLS.
func (c *conn) cleartext(cred credentials) error {
	c.be.Send(&pgproto3.AuthenticationCleartextPassword{})
	if err := c.authStep(pgproto3.AuthTypeCleartextPassword); err != nil {
		return err
	}
	msg, err := c.be.Receive()
	if err != nil {
		return c.authReceiveError(err)
	}
	pw, ok := msg.(*pgproto3.PasswordMessage)
	if !ok {
		return errorf(stateProtocol, "expected password response, got %T", msg)
	}
	if !cred.CheckPassword(pw.Password) {
		return c.errBadPassword()
	}
	return nil
}

// authStep flushes an authentication request and tells the decoder what
// the client's next 'p' message is.
func (c *conn) authStep(authType uint32) error {
	if err := c.be.SetAuthType(authType); err != nil {
		return fmt.Errorf("pgwire: %w", err)
	}
	if !c.flush() {
		return errClientGone
	}
	return nil
}

// errClientGone ends a startup whose client left; nothing is sent.
var errClientGone = errors.New("pgwire: the client closed the connection")

func (c *conn) authReceiveError(err error) error {
	var tooBig *pgproto3.ExceededMaxBodyLenErr
	if errors.As(err, &tooBig) {
		return errorf(stateProtocol, "message of %d bytes exceeds the limit of %d", tooBig.ActualBodyLen, tooBig.MaxExpectedBodyLen)
	}
	var de interface{ Timeout() bool }
	if errors.As(err, &de) && de.Timeout() {
		return errorf("08006", "authentication timed out")
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		// psql closes the connection when it learns it needs a password
		// it does not have, then asks for it and reconnects.
		return errClientGone
	}
	return errorf(stateProtocol, "invalid frontend message: %v", err)
}
