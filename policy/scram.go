package policy

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

const (
	scramPrefix = "SCRAM-SHA-256$"
	// scramIterations is the PBKDF2 iteration count of verifiers derived
	// here: the minimum RFC 7677 §4 recommends, and PostgreSQL's default
	// (scram_iterations).
	scramIterations = 4096
	// scramSaltLen is PostgreSQL's SCRAM_DEFAULT_SALT_LEN.
	scramSaltLen = 16
	// maxSCRAMIterations bounds the PBKDF2 work one verifier may ask of
	// Validate and of every login (about a second at this count).
	maxSCRAMIterations = 1 << 20
)

// scramSecret is what a SCRAM-SHA-256 server stores for a user (RFC 5802
// §3): the salt, the iteration count, StoredKey and ServerKey.
type scramSecret struct {
	salt       []byte
	iterations int
	storedKey  []byte
	serverKey  []byte
}

// SCRAMVerifier returns what a PostgreSQL SCRAM-SHA-256 exchange needs:
// from the user's "SCRAM-SHA-256$..." hash if it has one, or else derived
// from the plain password. ok is false when the user has neither (only a
// MySQL native hash, which SCRAM cannot use).
//
// A verifier derived from a plain password uses a random salt drawn when
// the policy is validated, kept for the life of the process: a SCRAM
// exchange is complete on one connection, so nothing needs the salt to
// survive a restart or to agree between proxies, and a random salt denies
// an attacker precomputed tables per user name. A User built in code and
// never validated gets a fresh salt per call, which is still correct.
func (u *User) SCRAMVerifier() (salt []byte, iterations int, storedKey, serverKey []byte, ok bool) {
	if u == nil {
		return nil, 0, nil, nil, false
	}
	s := u.secretsOrParse(true).scram
	if s == nil {
		return nil, 0, nil, nil, false
	}
	return clone(s.salt), s.iterations, clone(s.storedKey), clone(s.serverKey), true
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// deriveSCRAMSecret makes a verifier for plain with a fresh random salt.
func deriveSCRAMSecret(plain string) (*scramSecret, error) {
	salt, err := randomBytes(scramSaltLen)
	if err != nil {
		return nil, fmt.Errorf("derive a SCRAM verifier: %w", err)
	}
	return scramKeys(plain, salt, scramIterations)
}

// scramKeys computes, per RFC 5802 §3 with H = SHA-256 (RFC 7677):
//
//	SaltedPassword = Hi(password, salt, i)          (PBKDF2-HMAC-SHA-256)
//	ClientKey      = HMAC(SaltedPassword, "Client Key")
//	StoredKey      = H(ClientKey)
//	ServerKey      = HMAC(SaltedPassword, "Server Key")
//
// The password is not SASLprep-normalised (RFC 4013): for ASCII passwords
// that changes nothing; a non-ASCII password hashed by PostgreSQL may need
// to be given here as its verifier.
func scramKeys(plain string, salt []byte, iterations int) (*scramSecret, error) {
	salted, err := pbkdf2.Key(sha256.New, plain, salt, iterations, sha256.Size)
	if err != nil {
		return nil, fmt.Errorf("derive a SCRAM verifier: %w", err)
	}
	clientKey := hmacSHA256(salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	return &scramSecret{
		salt:       clone(salt),
		iterations: iterations,
		storedKey:  stored[:],
		serverKey:  hmacSHA256(salted, "Server Key"),
	}, nil
}

func hmacSHA256(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// matches reports whether plain is the password of the verifier.
func (s *scramSecret) matches(plain string) bool {
	got, err := scramKeys(plain, s.salt, s.iterations)
	if err != nil {
		return false
	}
	// Both keys are compared, with & rather than &&, so the time does not
	// tell which one differed.
	return subtle.ConstantTimeCompare(got.storedKey, s.storedKey)&
		subtle.ConstantTimeCompare(got.serverKey, s.serverKey) == 1
}

// String is PostgreSQL's pg_authid.rolpassword format:
// SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>, base64.
func (s *scramSecret) String() string {
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("%s%d:%s$%s:%s", scramPrefix, s.iterations, b64(s.salt), b64(s.storedKey), b64(s.serverKey))
}

func parseSCRAM(h string) (*scramSecret, error) {
	bad := func(why string) error {
		return fmt.Errorf("a SCRAM-SHA-256 verifier is SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>, this one %s", why)
	}
	params, keys, ok := strings.Cut(strings.TrimPrefix(h, scramPrefix), "$")
	if !ok {
		return nil, bad("lacks the \"$\" before the keys")
	}
	iter, saltB64, ok := strings.Cut(params, ":")
	if !ok {
		return nil, bad("lacks the \":\" between iterations and salt")
	}
	storedB64, serverB64, ok := strings.Cut(keys, ":")
	if !ok {
		return nil, bad("lacks the \":\" between StoredKey and ServerKey")
	}
	n, err := strconv.Atoi(iter)
	if err != nil || n < 1 || n > maxSCRAMIterations {
		return nil, bad(fmt.Sprintf("has iterations %q, not an integer from 1 to %d", iter, maxSCRAMIterations))
	}
	salt, err := base64.StdEncoding.DecodeString(saltB64)
	if err != nil || len(salt) == 0 {
		return nil, bad("has a salt that is not non-empty base64")
	}
	stored, err1 := base64.StdEncoding.DecodeString(storedB64)
	server, err2 := base64.StdEncoding.DecodeString(serverB64)
	if err := errors.Join(err1, err2); err != nil || len(stored) != sha256.Size || len(server) != sha256.Size {
		return nil, bad("has keys that are not base64 of 32 bytes each")
	}
	return &scramSecret{salt: salt, iterations: n, storedKey: stored, serverKey: server}, nil
}
