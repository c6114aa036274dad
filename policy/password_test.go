package policy

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
)

// clientScramble is what a MySQL client sends for mysql_native_password,
// written out independently of the server side under test.
func clientScramble(salt []byte, password string) []byte {
	stage1 := sha1.Sum([]byte(password))
	stage2 := sha1.Sum(stage1[:])
	h := sha1.Sum(append(append([]byte(nil), salt...), stage2[:]...))
	out := make([]byte, sha1.Size)
	for i := range out {
		out[i] = stage1[i] ^ h[i]
	}
	return out
}

func TestMySQLNativeHashKnownValue(t *testing.T) {
	// MySQL 5.7: SELECT PASSWORD('password').
	native, _, err := HashPassword("password")
	if err != nil {
		t.Fatal(err)
	}
	if want := "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"; native != want {
		t.Errorf("native hash = %s, want %s", native, want)
	}
}

func TestCheckMySQLNative(t *testing.T) {
	// Vector from go-sql-driver/mysql's TestAuthFastNativePassword: the
	// scramble its client sends for password "secret" and this nonce.
	salt := []byte{70, 114, 92, 94, 1, 38, 11, 116, 63, 114, 23, 101, 126, 103, 26, 95, 81, 17, 24, 21}
	scramble := []byte{53, 177, 140, 159, 251, 189, 127, 53, 109, 252, 172, 50, 211, 192, 240, 164, 26, 48, 207, 45}
	if got := clientScramble(salt, "secret"); !bytes.Equal(got, scramble) {
		t.Fatalf("the test's own client scramble = %v, want %v", got, scramble)
	}
	native, _, err := HashPassword("secret")
	if err != nil {
		t.Fatal(err)
	}
	plain := &User{Name: "p", Password: "secret", Role: "r"}
	hashed := &User{Name: "h", PasswordHashes: []string{native}, Role: "r"}
	lower := &User{Name: "l", PasswordHashes: []string{strings.ToLower(native)}, Role: "r"}
	for _, u := range []*User{plain, hashed, lower} {
		if !u.CheckMySQLNative(salt, scramble) {
			t.Errorf("user %s: right scramble refused", u.Name)
		}
		if u.CheckMySQLNative(salt, clientScramble(salt, "Secret")) {
			t.Errorf("user %s: scramble of a wrong password accepted", u.Name)
		}
		otherSalt := append([]byte{1}, salt[1:]...)
		if u.CheckMySQLNative(otherSalt, scramble) {
			t.Errorf("user %s: scramble for another nonce accepted", u.Name)
		}
		if u.CheckMySQLNative(salt, scramble[:19]) || u.CheckMySQLNative(salt, nil) {
			t.Errorf("user %s: short scramble accepted", u.Name)
		}
	}
	onlySCRAM := &User{PasswordHashes: []string{mustSCRAM(t, "secret")}}
	if onlySCRAM.CheckMySQLNative(salt, scramble) {
		t.Error("a user with only a SCRAM verifier passed a MySQL native check")
	}
}

func mustSCRAM(t *testing.T, plain string) string {
	t.Helper()
	_, scram, err := HashPassword(plain)
	if err != nil {
		t.Fatal(err)
	}
	return scram
}

// TestSCRAMKeysRFC7677 checks the key derivation against the SCRAM-SHA-256
// exchange of RFC 7677 §3 (user "user", password "pencil").
func TestSCRAMKeysRFC7677(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	s, err := scramKeys("pencil", salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	authMessage := "n=user,r=rOprNGfwEbeRWgbNEkqO," +
		"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096," +
		"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
	mac := func(key []byte) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(authMessage))
		return m.Sum(nil)
	}
	// The server checks a proof by ClientKey = proof XOR ClientSignature,
	// H(ClientKey) = StoredKey.
	proof, _ := base64.StdEncoding.DecodeString("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
	clientKey := mac(s.storedKey)
	for i := range clientKey {
		clientKey[i] ^= proof[i]
	}
	if got := sha256.Sum256(clientKey); !bytes.Equal(got[:], s.storedKey) {
		t.Error("the RFC's client proof does not verify against our StoredKey")
	}
	if got := base64.StdEncoding.EncodeToString(mac(s.serverKey)); got != "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=" {
		t.Errorf("server signature = %s, want the RFC's", got)
	}
}

func TestSCRAMVerifierFromPlainAndFromHash(t *testing.T) {
	_, scram, err := HashPassword("change-me")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(scram, "SCRAM-SHA-256$4096:") {
		t.Errorf("verifier %q is not in PostgreSQL's format", scram)
	}
	hashed := &User{PasswordHashes: []string{scram}}
	salt, iter, stored, server, ok := hashed.SCRAMVerifier()
	if !ok || iter != 4096 || len(salt) != 16 {
		t.Fatalf("verifier from hash: ok=%v iter=%d salt=%d bytes", ok, iter, len(salt))
	}
	// The same password with the same salt and count gives the same keys.
	fromPlain, err := scramKeys("change-me", salt, iter)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fromPlain.storedKey, stored) || !bytes.Equal(fromPlain.serverKey, server) {
		t.Error("keys derived from the plain password differ from the hash's")
	}
	if fromPlain.String() != scram {
		t.Errorf("formatted verifier %q, want %q", fromPlain.String(), scram)
	}

	// A plain-password user's verifier is fixed at Validate and checks out.
	p, err := Parse([]byte(minimal + roleAndUser))
	if err != nil {
		t.Fatal(err)
	}
	bob, _ := p.User("bob")
	salt1, iter1, stored1, server1, ok1 := bob.SCRAMVerifier()
	salt2, _, _, _, _ := bob.SCRAMVerifier()
	if !ok1 || iter1 != scramIterations || !bytes.Equal(salt1, salt2) {
		t.Fatalf("plain user's verifier not stable: ok=%v iter=%d", ok1, iter1)
	}
	again, _ := scramKeys("pw", salt1, iter1)
	if !bytes.Equal(again.storedKey, stored1) || !bytes.Equal(again.serverKey, server1) {
		t.Error("plain user's verifier is not of its password")
	}
	salt1[0] ^= 0xff
	if salt3, _, _, _, _ := bob.SCRAMVerifier(); bytes.Equal(salt3, salt1) {
		t.Error("SCRAMVerifier hands out its own slice")
	}

	onlyMySQL := &User{PasswordHashes: []string{"*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"}}
	if _, _, _, _, ok := onlyMySQL.SCRAMVerifier(); ok {
		t.Error("a user with only a MySQL hash has a SCRAM verifier")
	}
}

func TestCheckPassword(t *testing.T) {
	native, scram, err := HashPassword("s3cret!")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []*User{
		{Name: "plain", Password: "s3cret!"},
		{Name: "native", PasswordHashes: []string{native}},
		{Name: "scram", PasswordHashes: []string{scram}},
		{Name: "both", PasswordHashes: []string{native, scram}},
	} {
		if !u.CheckPassword("s3cret!") {
			t.Errorf("%s: right password refused", u.Name)
		}
		for _, wrong := range []string{"", "s3cret", "s3cret!!", "S3cret!"} {
			if u.CheckPassword(wrong) {
				t.Errorf("%s: wrong password %q accepted", u.Name, wrong)
			}
		}
	}
}

func TestHashPasswordRoundTrip(t *testing.T) {
	native, scram, err := HashPassword("round trip")
	if err != nil {
		t.Fatal(err)
	}
	_, scram2, _ := HashPassword("round trip")
	if scram == scram2 {
		t.Error("two SCRAM verifiers share a salt")
	}
	src := minimal + "roles:\n  r: {budget: {epsilon: 1}}\nusers:\n  u:\n    role: r\n    password_hashes: [\"" + native + "\", \"" + scram + "\"]\n"
	p, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := p.User("u")
	if !u.CheckPassword("round trip") || u.CheckPassword("round-trip") {
		t.Error("hashes from HashPassword do not check their password")
	}
	salt := []byte("01234567890123456789")
	if !u.CheckMySQLNative(salt, clientScramble(salt, "round trip")) {
		t.Error("native hash from HashPassword fails the wire check")
	}
	// The plain password next to its own hashes is accepted too.
	src = minimal + "roles:\n  r: {budget: {epsilon: 1}}\nusers:\n  u:\n    role: r\n    password: round trip\n    password_hashes: [\"" + native + "\", \"" + scram + "\"]\n"
	if _, err := Parse([]byte(src)); err != nil {
		t.Errorf("password with its own hashes refused: %v", err)
	}
	if _, _, err := HashPassword(""); err == nil {
		t.Error("an empty password was hashed")
	}
}
