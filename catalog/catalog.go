// Package catalog answers clients' metadata and session questions —
// information_schema tables, SHOW statements, system variables — from the
// table metadata the engine loaded from the backend, never by forwarding
// catalog SQL to the backend. That is what keeps metadata safe: nothing here
// has ever seen a row, so no answer can reveal row data or statistics of a
// private table (row counts, lengths, AUTO_INCREMENT, cardinalities and
// histograms are NULL or absent). The answers look like MariaDB 10.11's
// whether the backend is MariaDB or SQLite.
package catalog

import (
	"slices"
	"strings"

	"github.com/dpproxy/dpproxy/backend"
)

// InformationSchema is the name of the virtual schema of metadata tables.
const InformationSchema = "information_schema"

// ColumnInfo describes one column of a backend table: the backend's own
// description (COLUMN_TYPE or SQLite's declared type, COLUMN_KEY, default as
// SQL text).
type ColumnInfo = backend.ColumnInfo

// TableInfo is one table of the database as clients see it.
type TableInfo struct {
	Name    string // lower case
	Public  bool   // listed as public in the policy (no DP needed)
	Columns []backend.ColumnInfo
}

// Catalog is the metadata of one database as clients see it. It is
// immutable after New and safe for concurrent use.
type Catalog struct {
	db      string
	version string
	tables  []TableInfo // sorted by name
}

// New builds the catalog of one database as clients see it. The engine passes
// only the tables that are listed in the policy and present in the backend.
// serverVersion is what @@version and VERSION() report ("10.11.6-MariaDB").
func New(database string, tables []TableInfo, serverVersion string) *Catalog {
	c := &Catalog{db: database, version: serverVersion, tables: make([]TableInfo, len(tables))}
	for i, t := range tables {
		t.Name = strings.ToLower(t.Name)
		t.Columns = slices.Clone(t.Columns)
		c.tables[i] = t
	}
	slices.SortFunc(c.tables, func(a, b TableInfo) int { return strings.Compare(a.Name, b.Name) })
	return c
}

// Database is the name of the catalog's database.
func (c *Catalog) Database() string { return c.db }

// Lookup returns the user table called name (case-insensitive). The
// caller must not modify its Columns.
func (c *Catalog) Lookup(name string) (TableInfo, bool) {
	name = strings.ToLower(name)
	i, ok := slices.BinarySearchFunc(c.tables, name, func(t TableInfo, n string) int { return strings.Compare(t.Name, n) })
	if !ok {
		return TableInfo{}, false
	}
	return c.tables[i], true
}

// schema resolves the database a statement names (or the session's default
// when it names none): the catalog's own database or information_schema.
func (c *Catalog) schema(named, sessionDB string) (db string, infoSchema bool, err error) {
	if named == "" {
		named = sessionDB
	}
	switch {
	case named == "":
		return "", false, &NoDatabaseError{}
	case strings.EqualFold(named, InformationSchema):
		return InformationSchema, true, nil
	case strings.EqualFold(named, c.db):
		return c.db, false, nil
	}
	return "", false, &UnknownDBError{DB: named}
}

// table finds a table of the user database or of information_schema.
func (c *Catalog) table(db string, infoSchema bool, name string) (TableInfo, error) {
	if infoSchema {
		if vt, ok := virtualTables[strings.ToUpper(name)]; ok {
			return vt.info(), nil
		}
	} else if t, ok := c.Lookup(name); ok {
		return t, nil
	}
	return TableInfo{}, &UnknownTableError{DB: db, Table: name}
}
