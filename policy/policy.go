// Package policy is dpproxy's YAML policy: where to listen, which backend,
// the ledger, default noise, roles and their budgets, users, and for each
// table its privacy unit, contribution bounds, column bounds and public values.
// A Policy is validated when loaded and read-only afterwards.
package policy

import "time"

// Policy is the whole policy file.
type Policy struct {
	Listen   Listen            `yaml:"listen"`
	Backend  Backend           `yaml:"backend"`
	Ledger   Ledger            `yaml:"ledger"`
	Defaults Defaults          `yaml:"defaults"`
	Limits   Limits            `yaml:"limits"`
	TLS      *TLS              `yaml:"tls"`
	Roles    map[string]*Role  `yaml:"roles"`
	Users    map[string]*User  `yaml:"users"`
	Tables   map[string]*Table `yaml:"tables"`

	// keys maps each key path of the parsed file to where it was written,
	// so that validation errors can name a line; nil for a Policy built
	// in code.
	keys keyIndex
}

// Listen holds the front-door addresses ("host:port"); an empty one is not
// opened.
type Listen struct {
	MySQL    string `yaml:"mysql"`
	Postgres string `yaml:"postgres"`
	Admin    string `yaml:"admin"`
}

// Backend is the database dpproxy sits in front of.
type Backend struct {
	Driver string `yaml:"driver"` // mysql | sqlite | postgres
	// DSN is the driver's data source name; for sqlite a file path or
	// ":memory:".
	DSN string `yaml:"dsn"`
	// MaxOpenConns caps the backend connection pool (default 32).
	MaxOpenConns int `yaml:"max_open_conns"`
}

// Ledger is where the privacy ledger lives: a Badger directory (Path), or,
// for fleets of proxies sharing one budget, etcd (Etcd).
type Ledger struct {
	// Path is the ledger's directory. The policy does not require it: the
	// command that opens the ledger decides what an empty path means.
	Path string      `yaml:"path"`
	Etcd *EtcdLedger `yaml:"etcd"`
}

// EtcdLedger keeps the ledger in etcd so that several proxies share budgets.
type EtcdLedger struct {
	Endpoints []string `yaml:"endpoints"`
	// Prefix of every key (default "dpproxy"); one etcd can hold several ledgers.
	Prefix string `yaml:"prefix"`
}

// Defaults apply to a query when the session has set nothing.
type Defaults struct {
	// Epsilon is the ε of one query (0: default 1.0).
	Epsilon float64 `yaml:"epsilon"`
	// Delta is the δ of one query. Parse sets 1e-6 when the key is absent;
	// an explicit 0 means pure ε-DP (then the mechanism must be laplace).
	Delta     float64 `yaml:"delta"`
	Mechanism string  `yaml:"mechanism"` // laplace (default) | gaussian
}

// Limits protect the proxy and the backend.
type Limits struct {
	MaxConnections int      `yaml:"max_connections"` // 0: default 256
	QueryTimeout   Duration `yaml:"query_timeout"`   // 0: default 60s
	IdleTimeout    Duration `yaml:"idle_timeout"`    // 0: default 8h
	// MaxGroups caps the groups one DP answer may carry (default 10000).
	MaxGroups int `yaml:"max_groups"`
	// AnswerCacheTTL is how long a released answer is served again, free,
	// to the same user for the same statement, parameters and ε (default
	// 1h; negative turns repeats off).
	AnswerCacheTTL Duration `yaml:"answer_cache_ttl"`
	// MaxStatementBytes caps one statement's text, checked before any
	// parser sees it (default 1 MiB).
	MaxStatementBytes int `yaml:"max_statement_bytes"`
	// ResponseQuantum: once a statement has been charged, its reply (answer
	// or error) leaves at the next multiple of this interval after the
	// charge, so that its latency carries no bit finer than the quantum
	// (default 100ms; negative turns it off).
	ResponseQuantum Duration `yaml:"response_quantum"`
	// HandshakeTimeout is how long a new connection may take to
	// authenticate (default 10s).
	HandshakeTimeout Duration `yaml:"handshake_timeout"`
	// MaxUnauthenticated caps connections that have not finished
	// authenticating, over both doors (default 64).
	MaxUnauthenticated int `yaml:"max_unauthenticated"`
	// MaxFailedLogins is how many failed logins one source address may make
	// per minute before further attempts are refused (default 20).
	MaxFailedLogins int `yaml:"max_failed_logins"`
}

// TLS is the certificate clients are offered.
type TLS struct {
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
}

// Role is a set of users with the same privileges and budgets.
type Role struct {
	Name  string `yaml:"-"`
	Admin bool   `yaml:"admin"`
	// Budget is each user's own allowance (total over all time).
	Budget Budget `yaml:"budget"`
	// Pool, if set, is shared by all users of the role together.
	Pool *Budget `yaml:"pool"`
	// MaxEpsilonPerQuery caps one query's ε (0: no cap beyond the budget).
	MaxEpsilonPerQuery float64 `yaml:"max_epsilon_per_query"`
	// MinEpsilonPerQuery is the least ε one charged statement may spend
	// (default 1e-3): without a floor, a probe at ε = 5e-324 is free.
	MinEpsilonPerQuery float64 `yaml:"min_epsilon_per_query"`
	// MaxDeltaPerQuery caps one query's δ (0: no cap beyond the budget).
	MaxDeltaPerQuery float64 `yaml:"max_delta_per_query"`
}

// Budget is an (ε, δ) allowance: ε > 0 and 0 ≤ δ < 1.
type Budget struct {
	Epsilon float64 `yaml:"epsilon"`
	Delta   float64 `yaml:"delta"`
}

// User is one login. Password is the plain password; PasswordHashes holds
// verifiers instead: a MySQL native hash ("*" + 40 hex digits, as in
// mysql.user) and/or a PostgreSQL SCRAM-SHA-256 verifier
// ("SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>"). `dpproxy
// hash-password` prints both. A user with only a MySQL hash cannot log in
// over the PostgreSQL front door and vice versa. User and role names are
// case-sensitive, as MySQL and PostgreSQL account names are.
type User struct {
	Name           string   `yaml:"-"`
	Password       string   `yaml:"password"`
	PasswordHashes []string `yaml:"password_hashes"`
	Role           string   `yaml:"role"`

	// secrets caches the parsed verifiers; Validate fills it.
	secrets *secrets
}

// PrivacyUnitRow is the privacy_unit value that makes each row its own unit.
const PrivacyUnitRow = "row"

// Table describes a table the proxy may answer questions about.
type Table struct {
	Name string `yaml:"-"`
	// Public tables hold no personal data; they may be read row by row and
	// joined with private tables.
	Public bool `yaml:"public"`
	// PrivacyUnit is the column that identifies a person, or "row".
	PrivacyUnit string `yaml:"privacy_unit"`
	// MaxRowsPerUnit bounds the rows of one unit that reach an aggregate
	// (default 1 for privacy_unit: row, required otherwise).
	MaxRowsPerUnit int `yaml:"max_rows_per_unit"`
	// MaxGroupsPerUnit bounds the groups one unit contributes to (L0 bound;
	// default 1).
	MaxGroupsPerUnit int `yaml:"max_groups_per_unit"`
	// UnitName names the kind of person the privacy unit column identifies
	// ("person", "customer"). Private tables with the same unit name may be
	// joined on their privacy unit columns: their values identify the same
	// people, so a join row belongs to one person.
	UnitName string             `yaml:"unit_name"`
	Columns  map[string]*Column `yaml:"columns"`
}

// ColumnType is the type of a policy column.
type ColumnType string

const (
	TypeInt    ColumnType = "int"
	TypeFloat  ColumnType = "float"
	TypeString ColumnType = "string"
	TypeDate   ColumnType = "date"
	TypeBool   ColumnType = "bool"
)

// Column is what the policy knows about one column. Lower/Upper are public
// bounds (both set or neither; int, float and date columns); PublicValues, if
// set, is the public domain of a categorical column. After validation its
// values have the Go type of the column: int64 (int), float64 (float),
// string (string, and date as "YYYY-MM-DD") or bool.
//
// A column without a type gets one from what is known about it: int when
// both bounds are whole numbers, float when a bound is not, the type of its
// public values when they all share one YAML type, string otherwise.
type Column struct {
	Name string     `yaml:"-"`
	Type ColumnType `yaml:"type"`
	// Lower and Upper are the public bounds as numbers; for a date column,
	// days since 1970-01-01 (the policy writes them YYYY-MM-DD).
	Lower *float64 `yaml:"-"`
	Upper *float64 `yaml:"-"`
	// LowerValue and UpperValue are the bounds as written in the file;
	// validation turns them into Lower and Upper.
	LowerValue   any   `yaml:"lower"`
	UpperValue   any   `yaml:"upper"`
	PublicValues []any `yaml:"public_values"`
	// Unique marks a column that identifies a row (an id): it may not be a
	// GROUP BY key.
	Unique bool `yaml:"unique"`
}

// Bounded reports whether the column has public bounds.
func (c *Column) Bounded() bool { return c != nil && c.Lower != nil && c.Upper != nil }

// Duration is a time.Duration written as "30s", "5m" in YAML.
type Duration struct{ time.Duration }
