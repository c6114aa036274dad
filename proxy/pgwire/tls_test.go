package pgwire

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// selfSigned makes a certificate for 127.0.0.1 and localhost.
func selfSigned(t testing.TB) tls.Certificate {
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
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func TestTLS(t *testing.T) {
	s, _ := startServer(t, withTLS(t))
	ctx := context.Background()

	for _, user := range []string{"alice", "bob"} {
		c := connect(t, s, user+":"+passwords[user], "sslmode=require")
		if !c.PgConn().Conn().(interface{ ConnectionState() tls.ConnectionState }).ConnectionState().HandshakeComplete {
			t.Fatalf("%s: no TLS", user)
		}
		var n int64
		if err := c.QueryRow(ctx, "select 1").Scan(&n); err != nil || n != 1 {
			t.Fatalf("%s over TLS: %d, %v", user, n, err)
		}
	}

	// carol has only a MySQL hash: cleartext over TLS works...
	c := connect(t, s, "carol:"+carolPassword, "sslmode=require")
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("carol over TLS: %v", err)
	}
	// ...with the right password only...
	_, err := pgx.Connect(ctx, dsn(s, "carol:wrong", "sslmode=require"))
	wantState(t, err, stateInvalidPassword)
	// ...and never over plain TCP, where she gets the mock SCRAM exchange.
	_, err = pgx.Connect(ctx, dsn(s, "carol:"+carolPassword, "sslmode=disable"))
	wantState(t, err, stateInvalidPassword)
}

func TestNoTLSConfigured(t *testing.T) {
	s, _ := startServer(t)
	// sslmode=prefer is told 'N' and goes on in plain text.
	c := connect(t, s, "alice:"+alicePassword, "sslmode=prefer")
	if _, ok := c.PgConn().Conn().(*tls.Conn); ok {
		t.Fatal("TLS without a certificate")
	}
	// sslmode=require gives up.
	_, err := pgx.Connect(context.Background(), dsn(s, "alice:"+alicePassword, "sslmode=require"))
	if err == nil {
		t.Fatal("sslmode=require connected without TLS")
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		t.Fatalf("want a client-side refusal, got server error %v", pe)
	}
}
