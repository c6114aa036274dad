package pgwire

import (
	"bytes"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"testing"
)

// verifierFor derives a verifier as RFC 5802 §3 does.
func verifierFor(t *testing.T, password string, salt []byte, iter int) scramVerifier {
	t.Helper()
	salted, err := pbkdf2.Key(sha256.New, password, salt, iter, sha256.Size)
	if err != nil {
		t.Fatal(err)
	}
	clientKey := hmacSHA256(salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	return scramVerifier{salt: salt, iterations: iter, storedKey: stored[:], serverKey: hmacSHA256(salted, "Server Key")}
}

// The exchange of RFC 7677 §3 (user "user", password "pencil").
const (
	rfcSalt        = "W22ZaJ0SNY7soEsUEjb6gQ=="
	rfcServerNonce = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
	rfcClientFirst = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
	rfcServerFirst = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
	rfcClientFinal = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
	rfcServerFinal = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
)

func rfcServer(t *testing.T, password string, mock bool) *scramServer {
	salt, err := base64.StdEncoding.DecodeString(rfcSalt)
	if err != nil {
		t.Fatal(err)
	}
	s := newSCRAMServer(verifierFor(t, password, salt, 4096), mock)
	s.nonce = func() (string, error) { return rfcServerNonce, nil }
	return s
}

func TestSCRAMRFC7677Vector(t *testing.T) {
	s := rfcServer(t, "pencil", false)
	first, err := s.first([]byte(rfcClientFirst))
	if err != nil || string(first) != rfcServerFirst {
		t.Fatalf("server-first %q, %v\nwant %q", first, err, rfcServerFirst)
	}
	final, err := s.final([]byte(rfcClientFinal))
	if err != nil || string(final) != rfcServerFinal {
		t.Fatalf("server-final %q, %v\nwant %q", final, err, rfcServerFinal)
	}
}

func TestSCRAMRefusesWrongProof(t *testing.T) {
	for name, s := range map[string]*scramServer{
		"wrong password":           rfcServer(t, "pencil2", false),
		"mock with right keys too": rfcServer(t, "pencil", true),
	} {
		if _, err := s.first([]byte(rfcClientFirst)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.final([]byte(rfcClientFinal)); !errors.Is(err, errSCRAMProof) {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

func TestSCRAMMalformed(t *testing.T) {
	firsts := []string{
		"",
		"n",
		"n,",
		"p=tls-server-end-point,,n=,r=abc",
		"q,,n=,r=abc",
		"n,a=bob,n=,r=abc",
		"n,,m=ext,n=,r=abc",
		"n,,r=abc",
		"n,,n=user",
		"n,,n=,r=",
		"n,,n=,r=ab\x01c",
		"n,,n=,r=a b",
	}
	for _, m := range firsts {
		s := rfcServer(t, "pencil", false)
		var pe *protocolError
		if _, err := s.first([]byte(m)); !errors.As(err, &pe) {
			t.Errorf("client-first %q: %v", m, err)
		}
	}
	finals := []string{
		"",
		"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
		"c=eSws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
		"c=biws,r=rOprNGfwEbeRWgbNEkqO,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
		"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=AAAA",
		"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=!!!",
		"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,c=biws,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
	}
	for _, m := range finals {
		s := rfcServer(t, "pencil", false)
		if _, err := s.first([]byte(rfcClientFirst)); err != nil {
			t.Fatal(err)
		}
		var pe *protocolError
		if _, err := s.final([]byte(m)); !errors.As(err, &pe) {
			t.Errorf("client-final %q: %v", m, err)
		}
	}
}

// TestSCRAMYFlag: "y" (client could bind, thinks the server cannot) is
// accepted, and its c= must then be base64("y,,").
func TestSCRAMYFlag(t *testing.T) {
	s := rfcServer(t, "pencil", false)
	if _, err := s.first([]byte("y,,n=user,r=rOprNGfwEbeRWgbNEkqO")); err != nil {
		t.Fatal(err)
	}
	// The RFC's proof was computed over c=biws, so with c=eSws it cannot
	// verify; what matters is that the binding data is accepted.
	_, err := s.final([]byte("c=eSws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="))
	if !errors.Is(err, errSCRAMProof) {
		t.Fatalf("y flag: %v", err)
	}
}

func TestMockVerifierSaltIsStablePerName(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	a1, err := mockVerifier(secret, "mallory")
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := mockVerifier(secret, "mallory")
	b, _ := mockVerifier(secret, "trudy")
	if !bytes.Equal(a1.salt, a2.salt) || bytes.Equal(a1.salt, b.salt) || len(a1.salt) != 16 {
		t.Fatalf("salts %x %x %x", a1.salt, a2.salt, b.salt)
	}
	if bytes.Equal(a1.storedKey, a2.storedKey) {
		t.Fatal("mock keys are not random")
	}
	if a1.iterations != mockIterations {
		t.Fatalf("iterations %d", a1.iterations)
	}
}

func TestRandomNonceIsPrintableAndFresh(t *testing.T) {
	a, err := randomNonce()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := randomNonce()
	if a == b || !printableNonce(a) || len(a) != 24 {
		t.Fatalf("nonces %q %q", a, b)
	}
}
