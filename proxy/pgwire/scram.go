package pgwire

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// scramMechanism is the only SASL mechanism offered. Channel binding
// (SCRAM-SHA-256-PLUS, tls-server-end-point) is not offered, so a client
// that insists on it (channel_binding=require) cannot log in.
const scramMechanism = "SCRAM-SHA-256"

// scramNonceLen is the number of random bytes in the server's nonce, as in
// PostgreSQL (SCRAM_RAW_NONCE_LEN); RFC 5802 §5.1 asks only that it be
// unpredictable.
const scramNonceLen = 18

// mockIterations is the iteration count announced to an unknown user: the
// count of every verifier dpproxy derives itself, so it tells nothing.
const mockIterations = 4096

// scramVerifier is what the server stores for a user (RFC 5802 §3).
type scramVerifier struct {
	salt       []byte
	iterations int
	storedKey  []byte
	serverKey  []byte
}

// errSCRAMProof is a client-final message whose proof does not verify:
// the password is wrong (or the user unknown).
var errSCRAMProof = errors.New("pgwire: SCRAM proof does not verify")

// scramServer is the server side of one SCRAM-SHA-256 exchange
// (RFC 5802 §5, with H = SHA-256 per RFC 7677):
//
//	C: n,,n=,r=<cnonce>                        client-first
//	S: r=<cnonce><snonce>,s=<salt>,i=<iter>    server-first
//	C: c=biws,r=<cnonce><snonce>,p=<proof>     client-final
//	S: v=<ServerSignature>                     server-final
//
// A mock exchange (unknown user, or one with no SCRAM verifier) runs the
// same steps with a made-up verifier and fails at the proof, so that the
// messages and the work done do not tell whether the user exists.
type scramServer struct {
	v    scramVerifier
	mock bool
	// nonce returns the server's nonce; tests replace it.
	nonce func() (string, error)

	gs2Header       string // "n,," or "y,,", kept to check the client's c=
	clientFirstBare string
	serverFirst     string
	fullNonce       string
}

func newSCRAMServer(v scramVerifier, mock bool) *scramServer {
	return &scramServer{v: v, mock: mock, nonce: randomNonce}
}

func randomNonce() (string, error) {
	b := make([]byte, scramNonceLen)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("pgwire: draw a SCRAM nonce: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// protocolError is a SCRAM message that does not follow RFC 5802's
// grammar; the client gets SQLSTATE 08P01.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return "malformed SCRAM-SHA-256 message: " + e.msg }

func malformed(format string, args ...any) error {
	return &protocolError{fmt.Sprintf(format, args...)}
}

// first reads the client-first message and returns the server-first one.
//
//	client-first-message = gs2-header client-first-message-bare
//	gs2-header           = gs2-cbind-flag "," [ authzid ] ","
//	gs2-cbind-flag       = ("p=" cb-name) / "n" / "y"
//	client-first-message-bare = [reserved-mext ","] username "," nonce ["," extensions]
//
// The username attribute is ignored, as PostgreSQL does: the user is the
// one named in the startup message (libpq sends "n=").
func (s *scramServer) first(msg []byte) ([]byte, error) {
	m := string(msg)
	flag, rest, ok := strings.Cut(m, ",")
	if !ok {
		return nil, malformed("no GS2 header")
	}
	switch {
	case flag == "n", flag == "y":
		// "y": the client could bind the channel but thinks the server
		// cannot. Right: SCRAM-SHA-256-PLUS is never offered, so this is no
		// downgrade (RFC 5802 §6).
	case strings.HasPrefix(flag, "p="):
		return nil, malformed("channel binding %q was requested, but only %s without channel binding is offered", flag[2:], scramMechanism)
	default:
		return nil, malformed("unexpected channel binding flag %q", flag)
	}
	authzid, bare, ok := strings.Cut(rest, ",")
	if !ok {
		return nil, malformed("GS2 header is not terminated")
	}
	if authzid != "" {
		return nil, malformed("an authorization identity is not supported")
	}
	s.gs2Header = flag + ",,"
	s.clientFirstBare = bare

	attrs := strings.Split(bare, ",")
	if len(attrs) > 0 && strings.HasPrefix(attrs[0], "m=") {
		return nil, malformed("mandatory extension %q is not supported", attrs[0])
	}
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "n=") || !strings.HasPrefix(attrs[1], "r=") {
		return nil, malformed("expected n=<user>,r=<nonce>")
	}
	clientNonce := attrs[1][2:]
	if !printableNonce(clientNonce) {
		return nil, malformed("the client nonce is empty or not printable")
	}
	serverNonce, err := s.nonce()
	if err != nil {
		return nil, err
	}
	s.fullNonce = clientNonce + serverNonce
	s.serverFirst = "r=" + s.fullNonce +
		",s=" + base64.StdEncoding.EncodeToString(s.v.salt) +
		",i=" + strconv.Itoa(s.v.iterations)
	return []byte(s.serverFirst), nil
}

// printableNonce checks RFC 5802's "printable": ASCII 0x21-0x7E but ','.
func printableNonce(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; c < 0x21 || c > 0x7e || c == ',' {
			return false
		}
	}
	return true
}

// final verifies the client-final message and returns the server-final
// one. Per RFC 5802 §3:
//
//	AuthMessage     = client-first-message-bare "," server-first-message "," client-final-message-without-proof
//	ClientSignature = HMAC(StoredKey, AuthMessage)
//	ClientKey       = ClientProof XOR ClientSignature
//	accept iff H(ClientKey) = StoredKey
//	ServerSignature = HMAC(ServerKey, AuthMessage)
//
// A malformed message is a *protocolError; a proof that does not verify is
// errSCRAMProof.
func (s *scramServer) final(msg []byte) ([]byte, error) {
	m := string(msg)
	withoutProof, proofAttr, ok := cutLast(m, ",p=")
	if !ok {
		return nil, malformed("no proof")
	}
	attrs := strings.Split(withoutProof, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "c=") || !strings.HasPrefix(attrs[1], "r=") {
		return nil, malformed("expected c=<binding>,r=<nonce>")
	}
	binding, err := base64.StdEncoding.DecodeString(attrs[0][2:])
	if err != nil || string(binding) != s.gs2Header {
		return nil, malformed("channel binding data does not match the GS2 header")
	}
	if attrs[1][2:] != s.fullNonce {
		return nil, malformed("the nonce is not the one of this exchange")
	}
	proof, err := base64.StdEncoding.DecodeString(proofAttr)
	if err != nil || len(proof) != sha256.Size {
		return nil, malformed("the proof is not base64 of %d bytes", sha256.Size)
	}

	authMessage := s.clientFirstBare + "," + s.serverFirst + "," + withoutProof
	clientSignature := hmacSHA256(s.v.storedKey, authMessage)
	clientKey := make([]byte, sha256.Size)
	subtle.XORBytes(clientKey, proof, clientSignature)
	storedKey := sha256.Sum256(clientKey)
	// The mock flag is consulted only after the same work was done, and
	// the comparison takes the same time whatever the keys.
	verified := subtle.ConstantTimeCompare(storedKey[:], s.v.storedKey) == 1
	if !verified || s.mock {
		return nil, errSCRAMProof
	}
	serverSignature := hmacSHA256(s.v.serverKey, authMessage)
	return []byte("v=" + base64.StdEncoding.EncodeToString(serverSignature)), nil
}

// cutLast splits s around the last sep.
func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

func hmacSHA256(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// mockVerifier is the made-up verifier of a user that cannot log in with
// SCRAM. Its salt is HMAC(secret, user name), as PostgreSQL's
// scram_mock_salt hashes the name with a per-cluster nonce: the same name
// always gets the same salt, so repeated attempts cannot tell a mock
// exchange from a real one by a changing salt. Its keys are random, so no
// proof verifies against them (and the mock flag refuses anyway).
func mockVerifier(secret []byte, user string) (scramVerifier, error) {
	salt := hmacSHA256(secret, "salt\x00"+user)[:16]
	keys := make([]byte, 2*sha256.Size)
	if _, err := rand.Read(keys); err != nil {
		return scramVerifier{}, fmt.Errorf("pgwire: draw a mock SCRAM verifier: %w", err)
	}
	return scramVerifier{salt: salt, iterations: mockIterations, storedKey: keys[:sha256.Size], serverKey: keys[sha256.Size:]}, nil
}
