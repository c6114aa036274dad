// Package pgcatalog answers PostgreSQL clients' catalog queries — psql's
// \dt and \d, pgjdbc's DatabaseMetaData, SQLAlchemy's reflection, psycopg's
// type loading, BI tools' startup — without forwarding them to the backend.
//
// A Catalog keeps an in-memory SQLite database holding emulated
// pg_catalog and information_schema relations, filled from the policy's
// tables only (their names, columns and types: metadata, never a row).
// A query is classified on its parse tree (every relation and function must
// be on an allow-list), rendered to SQLite by rewrite.RenderCatalogSQL with
// the hooks in this package, and run there. Nothing in that database has
// seen a row of a private table, so no answer can reveal one: reltuples is
// -1 and relpages 0 for every table, sizes are NULL, and the statistics
// relations (pg_stats, pg_statistic, pg_stat_*) and the functions that run
// SQL or read files (query_to_xml, dblink, pg_read_file, lo_*) are refused.
package pgcatalog

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/dpproxy/dpproxy/catalog"
	"modernc.org/sqlite"
)

// Catalog is the emulated PostgreSQL catalog of one database. It is
// immutable after New and safe for concurrent use.
type Catalog struct {
	db      string
	schema  string
	version string
	tables  []catalog.TableInfo // sorted by name
	// relOIDs maps every pg_class row's OID to its schema and name, for
	// ::regclass output.
	relOIDs  map[uint32][2]string
	tableOID map[string]uint32

	limits queryLimits

	id     int64 // in registry, for the driver's lookup functions
	sqlite *sql.DB
	// keep holds one connection open for the catalog's lifetime: a shared
	// in-memory database lives only as long as some connection to it.
	keep *sql.Conn
}

// Session is who asks, and the settings of their session.
type Session struct {
	User            string
	Database        string
	ApplicationName string
	// Settings returns a setting the session changed (SET name = value);
	// nil or false means the default.
	Settings func(name string) (string, bool)
}

// Column is one column of an answer with its PostgreSQL type OID.
type Column struct {
	Name string
	OID  uint32
}

// New builds the catalog of database (schema is the one schema its tables
// are served in; "" is public) from the policy's tables as the backend
// describes them. serverVersion is PostgreSQL's server_version ("15.18").
func New(database, schema string, tables []catalog.TableInfo, serverVersion string) (*Catalog, error) {
	if schema == "" {
		schema = "public"
	}
	c := &Catalog{db: database, schema: strings.ToLower(schema), version: serverVersion,
		relOIDs: map[uint32][2]string{}, tableOID: map[string]uint32{}, limits: defaultLimits}
	for _, t := range tables {
		t.Name = strings.ToLower(t.Name)
		t.Columns = slices.Clone(t.Columns)
		c.tables = append(c.tables, t)
	}
	slices.SortFunc(c.tables, func(a, b catalog.TableInfo) int { return strings.Compare(a.Name, b.Name) })
	c.assignOIDs()

	var name [8]byte
	_, _ = rand.Read(name[:])
	dsn := "file:dpproxy-pgcatalog-" + hex.EncodeToString(name[:]) + "?mode=memory&cache=shared"
	c.sqlite = sql.OpenDB(connector{dsn: dsn})
	ctx := context.Background()
	var err error
	if c.keep, err = c.sqlite.Conn(ctx); err != nil {
		c.sqlite.Close()
		return nil, fmt.Errorf("pgcatalog: open the in-memory catalog: %w", err)
	}
	if err := c.fill(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("pgcatalog: build the catalog of %s: %w", database, err)
	}
	c.id = lastID.Add(1)
	registry.Store(c.id, c)
	return c, nil
}

// assignOIDs gives every table a stable OID: a hash of its name, so that
// adding a table to the policy does not renumber the others (clients such
// as psql carry OIDs from one query to the next).
func (c *Catalog) assignOIDs() {
	for _, r := range relations {
		c.relOIDs[r.OID] = [2]string{r.Schema, r.Name}
	}
	const span = 1 << 30
	for _, t := range c.tables {
		h := fnv.New32a()
		h.Write([]byte(t.Name))
		oid := firstUserOID + 16 + h.Sum32()%span
		for {
			if _, taken := c.relOIDs[oid]; !taken {
				break
			}
			oid++
		}
		c.relOIDs[oid] = [2]string{c.schema, t.Name}
		c.tableOID[t.Name] = oid
	}
}

// Close releases the in-memory database.
func (c *Catalog) Close() error {
	registry.Delete(c.id)
	if c.keep != nil {
		c.keep.Close()
	}
	return c.sqlite.Close()
}

// Database is the name of the served database.
func (c *Catalog) Database() string { return c.db }

// connector opens connections of the package's own SQLite driver, on which
// the catalog functions are registered, so that they reach no other SQLite
// connection of the process.
type connector struct{ dsn string }

func (k connector) Connect(context.Context) (driver.Conn, error) { return sqliteDriver.Open(k.dsn) }
func (k connector) Driver() driver.Driver                        { return sqliteDriver }

var sqliteDriver = newDriver()

func newDriver() *sqlite.Driver {
	d := &sqlite.Driver{}
	registerFunctions(d)
	return d
}
