// Package proxy is dpproxy's engine: one Session per client connection,
// whatever the wire protocol. Both front doors hand it SQL text and encode
// what it returns; every decision (parse, classify, plan, charge, query,
// noise, post-process) is made here, once.
package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dpproxy/dpproxy/backend"
	"github.com/dpproxy/dpproxy/catalog"
	"github.com/dpproxy/dpproxy/catalog/pgcatalog"
	"github.com/dpproxy/dpproxy/ledger"
	"github.com/dpproxy/dpproxy/mechanism"
	"github.com/dpproxy/dpproxy/metrics"
	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
)

// Version is dpproxy's version, set at build time with -ldflags.
var Version = "0.1.0-dev"

// Config wires an engine.
type Config struct {
	Policy  *policy.Policy
	Backend *backend.Backend
	Ledger  ledger.Store
	Logger  *slog.Logger
	// Database is the database name clients see; empty means the backend's.
	Database string
	// Metrics, if set, counts answers, refusals, spending and latency.
	Metrics *metrics.Metrics
}

// Engine is shared by all sessions; it is safe for concurrent use.
type Engine struct {
	policy   *policy.Policy
	backend  *backend.Backend
	ledger   ledger.Store
	log      *slog.Logger
	database string
	nextID   atomic.Uint32
	stmts    *stmtCache
	metrics  *metrics.Metrics

	mu      sync.RWMutex
	schema  map[string][]string             // backend columns of each policy table, lower case
	colInfo map[string][]backend.ColumnInfo // the same columns as the backend declares them
	tables  map[string]string               // every backend table: lower case → its name
	catalog *catalog.Catalog
	pgcat   *pgcatalog.Catalog // the emulated pg_catalog for PostgreSQL clients
	loaded  time.Time
}

// New builds an engine and reads the backend's metadata of the policy's
// tables. A policy table missing from the backend is logged, not fatal: the
// DBA may create it later.
func New(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.Policy == nil || cfg.Backend == nil || cfg.Ledger == nil {
		return nil, fmt.Errorf("proxy: policy, backend and ledger are all required")
	}
	e := &Engine{
		policy:   cfg.Policy,
		backend:  cfg.Backend,
		ledger:   cfg.Ledger,
		log:      cfg.Logger,
		database: cfg.Database,
		stmts:    newStmtCache(4096),
		metrics:  cfg.Metrics,
	}
	if e.log == nil {
		e.log = slog.Default()
	}
	if e.database == "" {
		// The backend's own name for its database (on PostgreSQL not the
		// schema, which clients see as public).
		e.database = cfg.Backend.Name
	}
	if e.database == "" {
		e.database = cfg.Backend.Database
	}
	for name, t := range cfg.Policy.Tables {
		// One release may round at most this many coordinates per unit
		// to the noise grid (see mechanism.MaxRoundedCoordinates).
		if t.MaxGroupsPerUnit > mechanism.MaxRoundedCoordinates {
			return nil, fmt.Errorf("proxy: table %s: max_groups_per_unit %d is over the supported %d", name, t.MaxGroupsPerUnit, mechanism.MaxRoundedCoordinates)
		}
	}
	if err := e.loadSchema(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// ServerVersion is what clients see as the server version: a MariaDB
// version they know how to talk to, marked as dpproxy.
func (e *Engine) ServerVersion() string { return "10.11.99-MariaDB-dpproxy-" + Version }

// Database is the one database clients see.
func (e *Engine) Database() string { return e.database }

// servesDatabase reports whether a client naming db at connect or in USE
// means the one database dpproxy serves: its own name for it, or the
// backend's (a client configured for the backend works unchanged).
func (e *Engine) servesDatabase(db string) bool {
	return strings.EqualFold(db, e.database) || (e.backend.Name != "" && strings.EqualFold(db, e.backend.Name))
}

// Policy returns the engine's policy (read-only).
func (e *Engine) Policy() *policy.Policy { return e.policy }

// LookupUser finds a login of the policy.
func (e *Engine) LookupUser(name string) (*policy.User, bool) { return e.policy.User(name) }

// loadSchema reads the columns of every policy table from the backend.
func (e *Engine) loadSchema(ctx context.Context) error {
	names, err := e.backend.Tables(ctx)
	if err != nil {
		return fmt.Errorf("proxy: reading the backend's tables: %w", err)
	}
	have := map[string]string{}
	for _, n := range names {
		have[strings.ToLower(n)] = n
	}
	schema := map[string][]string{}
	colInfo := map[string][]backend.ColumnInfo{}
	var infos []catalog.TableInfo
	var tables []string
	for name := range e.policy.Tables {
		tables = append(tables, name)
	}
	sort.Strings(tables)
	for _, name := range tables {
		t := e.policy.Tables[name]
		real, ok := have[name]
		if !ok {
			e.log.Warn("policy table not found in the backend", "table", name)
			continue
		}
		cols, err := e.backend.Columns(ctx, real)
		if err != nil {
			return fmt.Errorf("proxy: reading the columns of %s: %w", name, err)
		}
		lower := make([]string, len(cols))
		for i, c := range cols {
			lower[i] = strings.ToLower(c.Name)
		}
		schema[name] = lower
		colInfo[name] = cols
		infos = append(infos, catalog.TableInfo{Name: name, Public: t.Public, Columns: cols})
	}
	cat := catalog.New(e.database, infos, e.ServerVersion())
	pgcat, err := pgcatalog.New(e.database, pgSchema, infos, pgServerVersion)
	if err != nil {
		return fmt.Errorf("proxy: building the PostgreSQL catalog: %w", err)
	}
	e.mu.Lock()
	old := e.pgcat
	e.schema, e.colInfo, e.tables, e.catalog, e.pgcat, e.loaded = schema, colInfo, have, cat, pgcat, time.Now()
	e.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return nil
}

// Columns implements rewrite.Schema.
func (e *Engine) Columns(table string) ([]string, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	cols, ok := e.schema[strings.ToLower(table)]
	return cols, ok
}

// columnInfo is a policy table's backend columns, in the backend's order.
func (e *Engine) columnInfo(table string) ([]backend.ColumnInfo, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	cols, ok := e.colInfo[strings.ToLower(table)]
	return cols, ok
}

func (e *Engine) pgCatalog() *pgcatalog.Catalog {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.pgcat
}

// Close releases the engine's catalogs.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pgcat != nil {
		return e.pgcat.Close()
	}
	return nil
}

func (e *Engine) cat() *catalog.Catalog {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.catalog
}

// refreshSchema rereads the metadata when a policy table was missing, at
// most once every few seconds so a missing table cannot hammer the backend.
func (e *Engine) refreshSchema(ctx context.Context) {
	e.mu.RLock()
	recent := time.Since(e.loaded) < 5*time.Second
	e.mu.RUnlock()
	if recent {
		return
	}
	if err := e.loadSchema(ctx); err != nil {
		e.log.Warn("reloading backend metadata failed", "err", err)
	}
}

// NewSession opens a session for an authenticated user. db is the database
// the client asked for at connect ("" for none).
func (e *Engine) NewSession(ctx context.Context, user, db string, dialect parser.Dialect) (*Session, error) {
	u, ok := e.policy.User(user)
	if !ok {
		return nil, Errorf(CodeAuth, "access denied for user '%s'", user)
	}
	role, ok := e.policy.Role(u.Role)
	if !ok {
		return nil, Errorf(CodeInternal, "user %s has no role %s", user, u.Role)
	}
	s := &Session{
		engine:   e,
		user:     u,
		role:     role,
		dialect:  dialect,
		id:       e.nextID.Add(1),
		vars:     map[string]any{},
		userVars: map[string]any{},
	}
	if db != "" {
		if err := s.use(db); err != nil {
			return nil, err
		}
	}
	e.metrics.Connections(s.frontend(), 1)
	return s, nil
}

// backendTable reports whether the backend has a table, policy or not.
func (e *Engine) backendTable(name string) (string, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	real, ok := e.tables[strings.ToLower(name)]
	return real, ok
}

// backendDialect is the SQL dialect the backend speaks.
func (e *Engine) backendDialect() parser.Dialect {
	switch e.backend.Driver {
	case "sqlite":
		return parser.SQLite
	case "postgres":
		return parser.PostgreSQL
	}
	return parser.MySQL
}
