package mysqlwire

import (
	"log/slog"
	"net"

	"vitess.io/vitess/go/mysql"
	"vitess.io/vitess/go/mysql/sqlerror"
	querypb "vitess.io/vitess/go/vt/proto/query"

	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/proxy/admission"
)

// credentials verifies a user's password in the two forms a MySQL client
// proves it: the mysql_native_password scramble, and the cleartext password
// that caching_sha2_password's full authentication sends over TLS.
// *policy.User implements it.
type credentials interface {
	CheckMySQLNative(salt, scramble []byte) bool
	CheckPassword(plain string) bool
}

// authServer is dpproxy's mysql.AuthServer. It offers mysql_native_password
// always and caching_sha2_password when TLS is configured. It never answers
// caching_sha2's fast path (that needs SHA256(SHA256(password)) on file,
// which a policy need not hold) and asks for the full authentication
// instead, which vitess allows only over TLS or a Unix socket.
type authServer struct {
	lookup func(user string) (credentials, bool)
	// admit is called once a password is verified; an error refuses the
	// connection (too many connections).
	admit func(c *mysql.Conn) error
	// adm throttles failed logins per source address.
	adm     *admission.Admission
	log     *slog.Logger
	methods []mysql.AuthMethod
	def     mysql.AuthMethodDescription
}

var (
	_ credentials            = (*policy.User)(nil)
	_ mysql.AuthServer       = (*authServer)(nil)
	_ mysql.HashStorage      = (*authServer)(nil)
	_ mysql.CachingStorage   = (*authServer)(nil)
	_ mysql.PlainTextStorage = (*authServer)(nil)
	_ mysql.UserValidator    = (*authServer)(nil)
)

func newAuthServer(lookup func(string) (credentials, bool), admit func(*mysql.Conn) error, adm *admission.Admission, withTLS bool, log *slog.Logger) *authServer {
	a := &authServer{lookup: lookup, admit: admit, adm: adm, log: log, def: mysql.MysqlNativePassword}
	a.methods = []mysql.AuthMethod{mysql.NewMysqlNativeAuthMethod(a, a)}
	if withTLS {
		// Announcing caching_sha2_password makes MySQL 8 clients send it
		// first; a client without TLS is switched to mysql_native_password
		// by vitess, because the sha2 method declines non-TLS connections.
		a.def = mysql.CachingSha2Password
		a.methods = append(a.methods, mysql.NewSha2CachingAuthMethod(a, a, a))
	}
	return a
}

// AuthMethods implements mysql.AuthServer.
func (a *authServer) AuthMethods() []mysql.AuthMethod { return a.methods }

// DefaultAuthMethodDescription implements mysql.AuthServer.
func (a *authServer) DefaultAuthMethodDescription() mysql.AuthMethodDescription { return a.def }

// HandleUser implements mysql.UserValidator. Every user name is accepted
// here so that an unknown user gets the same "Access denied" as a wrong
// password, not a different error that would confirm which names exist.
func (a *authServer) HandleUser(string) bool { return true }

// UserEntryWithHash implements mysql.HashStorage for mysql_native_password.
func (a *authServer) UserEntryWithHash(c *mysql.Conn, salt []byte, user string, scramble []byte, remote net.Addr) (mysql.Getter, error) {
	if a.adm.LoginThrottled(remote) {
		return nil, a.throttled(user, remote, len(scramble) > 0)
	}
	cred, ok := a.lookup(user)
	if !ok || !cred.CheckMySQLNative(salt, scramble) {
		return nil, a.deny(user, remote, len(scramble) > 0, mysql.MysqlNativePassword)
	}
	return a.accept(c, user)
}

// UserEntryWithCacheHash implements mysql.CachingStorage: always ask for
// the full authentication (see authServer).
func (a *authServer) UserEntryWithCacheHash(*mysql.Conn, []byte, string, []byte, net.Addr) (mysql.Getter, mysql.CacheState, error) {
	return nil, mysql.AuthNeedMoreData, nil
}

// UserEntryWithPassword implements mysql.PlainTextStorage for the full
// caching_sha2_password authentication over TLS.
func (a *authServer) UserEntryWithPassword(c *mysql.Conn, user, password string, remote net.Addr) (mysql.Getter, error) {
	if a.adm.LoginThrottled(remote) {
		return nil, a.throttled(user, remote, password != "")
	}
	cred, ok := a.lookup(user)
	if !ok || !cred.CheckPassword(password) {
		return nil, a.deny(user, remote, password != "", mysql.CachingSha2Password)
	}
	return a.accept(c, user)
}

func (a *authServer) accept(c *mysql.Conn, user string) (mysql.Getter, error) {
	if err := a.admit(c); err != nil {
		return nil, err
	}
	return callerID(user), nil
}

// deny counts and logs a failed login and builds MySQL's own message for
// it.
func (a *authServer) deny(user string, remote net.Addr, withPassword bool, method mysql.AuthMethodDescription) error {
	host := hostOf(remote)
	if a.adm.LoginFailed(remote) {
		a.log.Warn("mysql logins from this address throttled: too many failures", "host", host)
	}
	a.log.Warn("mysql login refused", admission.String("user", user), "host", host, "method", string(method))
	return accessDenied(user, host, withPassword, "")
}

// throttled refuses a login from an address with too many recent
// failures, without looking at the password: MySQL's access-denied error,
// which every client handles, and a sentence saying to wait.
func (a *authServer) throttled(user string, remote net.Addr, withPassword bool) error {
	host := hostOf(remote)
	a.log.Debug("mysql login refused: address throttled", admission.String("user", user), "host", host)
	return accessDenied(user, host, withPassword,
		"; too many failed logins from this address, wait a minute before trying again")
}

// accessDenied is ER_ACCESS_DENIED_ERROR (1045) in MySQL's words. The user
// name is clipped: the client sent it, but up to 64 KiB of it need not
// travel back.
func accessDenied(user, host string, withPassword bool, suffix string) error {
	using := "NO"
	if withPassword {
		using = "YES"
	}
	return sqlerror.NewSQLErrorf(sqlerror.ERAccessDeniedError, sqlerror.SSAccessDeniedError,
		"Access denied for user '%s'@'%s' (using password: %s)%s", admission.Clip(user), host, using, suffix)
}

// hostOf is the client's address without the port.
func hostOf(remote net.Addr) string {
	if remote == nil {
		return "localhost"
	}
	host := remote.String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return host
}

// callerID is the mysql.Getter vitess keeps as the connection's UserData.
type callerID string

func (u callerID) Get() *querypb.VTGateCallerID {
	return &querypb.VTGateCallerID{Username: string(u)}
}
