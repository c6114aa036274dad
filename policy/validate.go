package policy

import (
	"fmt"
	"math"
	"net"
	"slices"
	"strings"
	"time"
)

// Defaults filled in by Validate (and, for δ, by Parse).
const (
	defaultEpsilon        = 1.0
	defaultDelta          = 1e-6
	defaultMechanism      = "laplace"
	defaultMaxOpenConns   = 32
	defaultMaxConnections = 256
	defaultQueryTimeout   = 60 * time.Second
	defaultIdleTimeout    = 8 * time.Hour
	defaultMaxGroups      = 10000
	// DefaultMaxStatementBytes is limits.max_statement_bytes' default.
	DefaultMaxStatementBytes  = 1 << 20
	defaultResponseQuantum    = 100 * time.Millisecond
	defaultHandshakeTimeout   = 10 * time.Second
	defaultMaxUnauthenticated = 64
	defaultMaxFailedLogins    = 20
	// DefaultMinEpsilonPerQuery is a role's min_epsilon_per_query default.
	DefaultMinEpsilonPerQuery = 1e-3
)

var (
	drivers    = []string{"mysql", "sqlite", "postgres"}
	mechanisms = []string{"laplace", "gaussian"}
)

// Validate checks the policy, fills in defaults and normalises names (table
// and column keys lower-cased; Name fields set from the keys). Parse calls
// it; call it again after changing a Policy in code. The error lists every
// problem found, each a sentence naming what it is about and, for a parsed
// policy, the line.
func (p *Policy) Validate() error {
	if err := p.validate(); err != nil {
		return fmt.Errorf("policy: %w", err)
	}
	return nil
}

func (p *Policy) validate() error {
	v := &validator{keys: p.keys}
	v.listen(&p.Listen)
	v.backend(&p.Backend)
	v.defaults(&p.Defaults)
	v.limits(&p.Limits)
	v.tls(p.TLS)
	v.roles(p.Roles)
	v.users(p.Users, p.Roles)
	p.Tables = v.tables(p.Tables)
	if len(v.problems) == 0 {
		return nil
	}
	// In file order, as the user will fix them; problems without a line
	// (a policy built in code) keep the order they were found in.
	slices.SortStableFunc(v.problems, func(a, b error) int { return lineOf(a) - lineOf(b) })
	return v.problems
}

// validator collects the problems of one policy, so that a user fixing the
// file sees all of them at once.
type validator struct {
	keys     keyIndex
	problems problems
}

// fail records a problem about the key at path.
func (v *validator) fail(path []string, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if line := v.keys.line(path...); line > 0 {
		v.problems = append(v.problems, &lineError{Line: line, Msg: msg})
		return
	}
	v.problems = append(v.problems, fmt.Errorf("%s", msg))
}

// problems is every problem of a policy.
type problems []error

func (ps problems) Error() string {
	if len(ps) == 1 {
		return ps[0].Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d problems:", len(ps))
	for _, e := range ps {
		b.WriteString("\n\t")
		b.WriteString(e.Error())
	}
	return b.String()
}

func (ps problems) Unwrap() []error { return ps }

func lineOf(err error) int {
	if le, ok := err.(*lineError); ok {
		return le.Line
	}
	return 0
}

func path(keys ...string) []string { return keys }

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func (v *validator) listen(l *Listen) {
	for _, a := range []struct{ key, addr string }{
		{"mysql", l.MySQL}, {"postgres", l.Postgres}, {"admin", l.Admin},
	} {
		if a.addr == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(a.addr); err != nil {
			v.fail(path("listen", a.key), "listen.%s address %q is not host:port: %v", a.key, a.addr, err)
		}
	}
}

func (v *validator) backend(b *Backend) {
	b.Driver = strings.ToLower(strings.TrimSpace(b.Driver))
	switch {
	case b.Driver == "":
		v.fail(path("backend", "driver"), "backend.driver is required (one of %s)", strings.Join(drivers, ", "))
	case !slices.Contains(drivers, b.Driver):
		v.fail(path("backend", "driver"), "backend.driver %q is not one of %s", b.Driver, strings.Join(drivers, ", "))
	}
	if strings.TrimSpace(b.DSN) == "" {
		v.fail(path("backend", "dsn"), "backend.dsn is required (for sqlite a file path or \":memory:\")")
	}
	switch {
	case b.MaxOpenConns < 0:
		v.fail(path("backend", "max_open_conns"), "backend.max_open_conns must not be negative, got %d", b.MaxOpenConns)
	case b.MaxOpenConns == 0:
		b.MaxOpenConns = defaultMaxOpenConns
	}
}

func (v *validator) defaults(d *Defaults) {
	if d.Epsilon == 0 {
		d.Epsilon = defaultEpsilon
	}
	if !finite(d.Epsilon) || d.Epsilon <= 0 {
		v.fail(path("defaults", "epsilon"), "defaults.epsilon must be a finite number above 0, got %v", d.Epsilon)
	}
	if !finite(d.Delta) || d.Delta < 0 || d.Delta >= 1 {
		v.fail(path("defaults", "delta"), "defaults.delta must be at least 0 and below 1, got %v", d.Delta)
	}
	d.Mechanism = strings.ToLower(strings.TrimSpace(d.Mechanism))
	if d.Mechanism == "" {
		d.Mechanism = defaultMechanism
	}
	switch {
	case !slices.Contains(mechanisms, d.Mechanism):
		v.fail(path("defaults", "mechanism"), "defaults.mechanism %q is not one of %s", d.Mechanism, strings.Join(mechanisms, ", "))
	case d.Mechanism == "gaussian" && d.Delta == 0:
		// The Gaussian mechanism gives (ε, δ)-DP only for δ > 0 (Dwork and
		// Roth 2014, Theorem A.1).
		v.fail(path("defaults", "mechanism"), "defaults.mechanism gaussian needs defaults.delta above 0")
	}
}

func (v *validator) limits(l *Limits) {
	nonNegative := func(key string, n *int, def int) {
		switch {
		case *n < 0:
			v.fail(path("limits", key), "limits.%s must not be negative, got %d", key, *n)
		case *n == 0:
			*n = def
		}
	}
	nonNegative("max_connections", &l.MaxConnections, defaultMaxConnections)
	nonNegative("max_groups", &l.MaxGroups, defaultMaxGroups)
	nonNegative("max_statement_bytes", &l.MaxStatementBytes, DefaultMaxStatementBytes)
	nonNegative("max_unauthenticated", &l.MaxUnauthenticated, defaultMaxUnauthenticated)
	nonNegative("max_failed_logins", &l.MaxFailedLogins, defaultMaxFailedLogins)
	duration := func(key string, d *Duration, def time.Duration) {
		switch {
		case d.Duration < 0:
			v.fail(path("limits", key), "limits.%s must not be negative, got %v", key, d.Duration)
		case d.Duration == 0:
			d.Duration = def
		}
	}
	duration("query_timeout", &l.QueryTimeout, defaultQueryTimeout)
	duration("idle_timeout", &l.IdleTimeout, defaultIdleTimeout)
	duration("handshake_timeout", &l.HandshakeTimeout, defaultHandshakeTimeout)
	// A negative quantum is "off" (for benchmarks that measure the rest).
	if l.ResponseQuantum.Duration == 0 {
		l.ResponseQuantum.Duration = defaultResponseQuantum
	}
}

func (v *validator) tls(t *TLS) {
	if t == nil {
		return
	}
	if t.Cert == "" || t.Key == "" {
		v.fail(path("tls"), "tls needs both cert and key")
	}
}

// budget checks an (ε, δ) allowance written at path.
func (v *validator) budget(b *Budget, what string, at []string) {
	if !finite(b.Epsilon) || b.Epsilon <= 0 {
		v.fail(append(at, "epsilon"), "%s epsilon must be a finite number above 0, got %v", what, b.Epsilon)
	}
	if !finite(b.Delta) || b.Delta < 0 || b.Delta >= 1 {
		v.fail(append(at, "delta"), "%s delta must be at least 0 and below 1, got %v", what, b.Delta)
	}
}

func (v *validator) roles(roles map[string]*Role) {
	for _, name := range sortedKeys(roles) {
		r := roles[name]
		at := path("roles", name)
		if r == nil {
			r = new(Role)
			roles[name] = r
		}
		r.Name = name
		if strings.TrimSpace(name) == "" {
			v.fail(at, "a role has an empty name")
		}
		v.budget(&r.Budget, fmt.Sprintf("role %q budget", name), path("roles", name, "budget"))
		if r.Pool != nil {
			v.budget(r.Pool, fmt.Sprintf("role %q pool", name), path("roles", name, "pool"))
		}
		if !finite(r.MaxEpsilonPerQuery) || r.MaxEpsilonPerQuery < 0 {
			v.fail(path("roles", name, "max_epsilon_per_query"), "role %q max_epsilon_per_query must be a finite number, 0 or above, got %v", name, r.MaxEpsilonPerQuery)
		}
		switch {
		case !finite(r.MinEpsilonPerQuery) || r.MinEpsilonPerQuery < 0:
			v.fail(path("roles", name, "min_epsilon_per_query"), "role %q min_epsilon_per_query must be a finite number, 0 or above, got %v", name, r.MinEpsilonPerQuery)
		case r.MinEpsilonPerQuery == 0:
			r.MinEpsilonPerQuery = DefaultMinEpsilonPerQuery
		}
		if r.MaxEpsilonPerQuery > 0 && r.MinEpsilonPerQuery > r.MaxEpsilonPerQuery {
			v.fail(path("roles", name, "min_epsilon_per_query"), "role %q min_epsilon_per_query %v is above its max_epsilon_per_query %v", name, r.MinEpsilonPerQuery, r.MaxEpsilonPerQuery)
		}
		if !finite(r.MaxDeltaPerQuery) || r.MaxDeltaPerQuery < 0 || r.MaxDeltaPerQuery >= 1 {
			v.fail(path("roles", name, "max_delta_per_query"), "role %q max_delta_per_query must be at least 0 and below 1, got %v", name, r.MaxDeltaPerQuery)
		}
	}
}

func (v *validator) users(users map[string]*User, roles map[string]*Role) {
	for _, name := range sortedKeys(users) {
		u := users[name]
		at := path("users", name)
		if u == nil {
			u = new(User)
			users[name] = u
		}
		u.Name = name
		if strings.TrimSpace(name) == "" {
			v.fail(at, "a user has an empty name")
		}
		switch {
		case u.Role == "":
			v.fail(append(at, "role"), "user %q needs a role", name)
		case roles[u.Role] == nil:
			v.fail(append(at, "role"), "user %q has role %q, which the policy does not define", name, u.Role)
		}
		if u.Password == "" && len(u.PasswordHashes) == 0 {
			v.fail(at, "user %q needs a password or password_hashes", name)
			continue
		}
		s, err := newSecrets(u, true)
		if err != nil {
			v.fail(append(at, "password_hashes"), "user %q: %v", name, err)
			continue
		}
		u.secrets = s
	}
}
