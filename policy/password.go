package policy

import (
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// secrets are a user's parsed verifiers.
type secrets struct {
	// mysqlStage2 is SHA1(SHA1(password)), what mysql.user stores for
	// mysql_native_password.
	mysqlStage2 []byte
	scram       *scramSecret
}

// newSecrets parses u's password hashes, or derives the verifiers from its
// plain password. With deriveSCRAM, a SCRAM verifier is derived from the
// plain password when no SCRAM hash is given (that costs a PBKDF2 run).
func newSecrets(u *User, deriveSCRAM bool) (*secrets, error) {
	s := new(secrets)
	for i, h := range u.PasswordHashes {
		h = strings.TrimSpace(h)
		switch {
		case strings.HasPrefix(h, "*"):
			if s.mysqlStage2 != nil {
				return nil, fmt.Errorf("password_hashes[%d] is a second MySQL native hash; give one", i)
			}
			stage2, err := parseMySQLNative(h)
			if err != nil {
				return nil, fmt.Errorf("password_hashes[%d]: %w", i, err)
			}
			s.mysqlStage2 = stage2
		case strings.HasPrefix(h, scramPrefix):
			if s.scram != nil {
				return nil, fmt.Errorf("password_hashes[%d] is a second SCRAM-SHA-256 verifier; give one", i)
			}
			sc, err := parseSCRAM(h)
			if err != nil {
				return nil, fmt.Errorf("password_hashes[%d]: %w", i, err)
			}
			s.scram = sc
		default:
			return nil, fmt.Errorf("password_hashes[%d] is neither a MySQL native hash (\"*\" and 40 hex digits) nor a SCRAM-SHA-256 verifier (%q...)", i, scramPrefix)
		}
	}
	if u.Password == "" {
		return s, nil
	}
	// A hash given next to a plain password must be of the same password,
	// or the two front doors would accept different passwords.
	if s.mysqlStage2 != nil && !equal(s.mysqlStage2, mysqlStage2(u.Password)) {
		return nil, errors.New("the MySQL native hash in password_hashes is not of the plain password")
	}
	if s.scram != nil && !s.scram.matches(u.Password) {
		return nil, errors.New("the SCRAM-SHA-256 verifier in password_hashes is not of the plain password")
	}
	if s.mysqlStage2 == nil {
		s.mysqlStage2 = mysqlStage2(u.Password)
	}
	if s.scram == nil && deriveSCRAM {
		sc, err := deriveSCRAMSecret(u.Password)
		if err != nil {
			return nil, err
		}
		s.scram = sc
	}
	return s, nil
}

// secretsOrParse returns the verifiers Validate cached, or parses them now
// for a User that was built in code and never validated.
func (u *User) secretsOrParse(deriveSCRAM bool) *secrets {
	if u.secrets != nil {
		return u.secrets
	}
	s, err := newSecrets(u, deriveSCRAM)
	if err != nil {
		return new(secrets)
	}
	return s
}

// CheckPassword reports whether plain is u's password. It compares in
// constant time with the plain password or with any of the hashes.
func (u *User) CheckPassword(plain string) bool {
	if u == nil || plain == "" {
		return false
	}
	if u.Password != "" {
		// Comparing digests keeps the time independent of both lengths.
		a, b := sha256.Sum256([]byte(plain)), sha256.Sum256([]byte(u.Password))
		return equal(a[:], b[:])
	}
	s := u.secretsOrParse(false)
	ok := false
	if s.mysqlStage2 != nil && equal(s.mysqlStage2, mysqlStage2(plain)) {
		ok = true
	}
	if s.scram != nil && s.scram.matches(plain) {
		ok = true
	}
	return ok
}

// CheckMySQLNative verifies a mysql_native_password answer: salt is the
// 20-byte nonce the server sent in its handshake, scramble the client's
// 20-byte reply.
//
// The client computes (MySQL internals manual, "Native Authentication";
// sql/auth/password.cc):
//
//	scramble = SHA1(pw) XOR SHA1(salt ‖ SHA1(SHA1(pw)))
//
// The server knows stage2 = SHA1(SHA1(pw)), so it recovers
// candidate = scramble XOR SHA1(salt ‖ stage2) and accepts if
// SHA1(candidate) = stage2. That works from the plain password and from a
// "*HEX" hash alike.
func (u *User) CheckMySQLNative(salt, scramble []byte) bool {
	if u == nil || len(scramble) != sha1.Size {
		return false
	}
	stage2 := u.secretsOrParse(false).mysqlStage2
	if stage2 == nil {
		return false
	}
	h := sha1.New()
	h.Write(salt)
	h.Write(stage2)
	candidate := h.Sum(nil)
	subtle.XORBytes(candidate, candidate, scramble)
	got := sha1.Sum(candidate)
	return equal(got[:], stage2)
}

// HashPassword returns the two verifiers of plain that password_hashes
// accepts: the MySQL native hash ("*" + upper-case hex SHA1(SHA1(plain)),
// as MySQL's PASSWORD() printed it) and a PostgreSQL SCRAM-SHA-256 verifier
// with a fresh random salt.
func HashPassword(plain string) (mysqlNative string, scram string, err error) {
	if plain == "" {
		return "", "", errors.New("policy: cannot hash an empty password")
	}
	sc, err := deriveSCRAMSecret(plain)
	if err != nil {
		return "", "", fmt.Errorf("policy: hash password: %w", err)
	}
	return "*" + strings.ToUpper(hex.EncodeToString(mysqlStage2(plain))), sc.String(), nil
}

// equal compares in constant time.
func equal(a, b []byte) bool { return subtle.ConstantTimeCompare(a, b) == 1 }

func mysqlStage2(plain string) []byte {
	stage1 := sha1.Sum([]byte(plain))
	stage2 := sha1.Sum(stage1[:])
	return stage2[:]
}

func parseMySQLNative(h string) ([]byte, error) {
	digits := h[1:]
	if len(digits) != 2*sha1.Size {
		return nil, fmt.Errorf("a MySQL native hash is \"*\" and 40 hex digits, this one has %d characters after \"*\"", len(digits))
	}
	b, err := hex.DecodeString(digits)
	if err != nil {
		return nil, errors.New("a MySQL native hash is \"*\" and 40 hex digits, this one has a character that is not a hex digit")
	}
	return b, nil
}

// randomBytes reads n bytes from crypto/rand.
func randomBytes(n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("read random bytes: %w", err)
	}
	return b, nil
}
