package mysqlwire

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/policy"
)

// selfSignedTLS makes a server certificate for 127.0.0.1.
func selfSignedTLS(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "dpproxy test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

// TestCachingSha2OverTLS logs in a user whose policy holds only a
// SCRAM-SHA-256 verifier: mysql_native_password cannot verify it, so a
// successful login proves the cleartext caching_sha2_password path over
// TLS, and the same login without TLS must fail.
func TestCachingSha2OverTLS(t *testing.T) {
	_, scram, err := policy.HashPassword("tls-only")
	if err != nil {
		t.Fatal(err)
	}
	bob := &policy.User{Name: "bob", PasswordHashes: []string{scram}}
	s, _ := startServer(t, func(c *Config) {
		c.TLS = selfSignedTLS(t)
		lookup := c.LookupUser
		c.LookupUser = func(name string) (*policy.User, bool) {
			if name == "bob" {
				return bob, true
			}
			return lookup(name)
		}
	})

	tlsDB, err := sql.Open("mysql", dsn(s, "bob", "tls-only", "", map[string]string{"tls": "skip-verify"}))
	if err != nil {
		t.Fatal(err)
	}
	defer tlsDB.Close()
	var one int
	if err := tlsDB.QueryRow("select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("caching_sha2_password over TLS: %v", err)
	}

	plainDB, err := sql.Open("mysql", dsn(s, "bob", "tls-only", "", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer plainDB.Close()
	var me *mysql.MySQLError
	if err := plainDB.Ping(); !errors.As(err, &me) || me.Number != 1045 {
		t.Fatalf("without TLS: got %v, want 1045", err)
	}

	// A user with a plain password still logs in without TLS: the server
	// announces caching_sha2_password and switches the client to
	// mysql_native_password.
	alice := openDB(t, s, "")
	if err := alice.Ping(); err != nil {
		t.Fatalf("native password on a TLS-enabled server: %v", err)
	}
}

func TestWrongPasswordOverTLS(t *testing.T) {
	s, _ := startServer(t, func(c *Config) { c.TLS = selfSignedTLS(t) })
	d, err := sql.Open("mysql", dsn(s, "alice", "wrong", "", map[string]string{"tls": "skip-verify"}))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var me *mysql.MySQLError
	if err := d.Ping(); !errors.As(err, &me) || me.Number != 1045 || string(me.SQLState[:]) != "28000" {
		t.Fatalf("got %v, want 1045", err)
	}
}
