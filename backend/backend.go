// Package backend opens the database dpproxy sits in front of, through
// database/sql, and reads its metadata: the base tables of the current database
// and their columns. MySQL/MariaDB (github.com/go-sql-driver/mysql) and SQLite
// (modernc.org/sqlite, pure Go) and PostgreSQL (github.com/lib/pq) are supported.
package backend

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Driver names accepted by Open.
const (
	MySQL    = "mysql"
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// ErrNoTable is returned (wrapped) by Columns for a table the current database
// does not have.
var ErrNoTable = errors.New("no such table")

// Backend is an open connection pool to one database.
type Backend struct {
	DB     *sql.DB
	Driver string // MySQL, SQLite or Postgres
	// Database is the database (MySQL) or schema (SQLite) whose tables
	// Tables and Columns describe: for MySQL the DSN's database, for SQLite
	// "main" unless the caller sets another attached schema.
	Database string
	// Name is the database's name as its server knows it, which clients
	// name when they connect: the DSN's database on MySQL, current_database()
	// on PostgreSQL (where Database is the schema), Database on SQLite.
	Name string
	// mariadb is set by Open when a MySQL-protocol backend is MariaDB,
	// whose SET STATEMENT … FOR bounds each statement's time (pin.go).
	mariadb bool
}

// ColumnInfo describes one column as the backend declares it.
type ColumnInfo struct {
	Name string
	// Type is the declared type: MySQL's COLUMN_TYPE ("bigint(20)",
	// "varchar(64)"), SQLite's declared type as written (may be empty).
	Type     string
	Nullable bool
	// Key is "PRI" for a primary key column; MySQL also reports "UNI" and
	// "MUL" (first column of a non-unique index). Empty otherwise.
	Key string
	// Default is the default expression as the backend reports it (string
	// literals quoted, as in SQL), nil when the column has none or its
	// default is NULL.
	Default *string
}

// Open opens a pool of at most maxOpen connections (no limit if maxOpen <= 0)
// to driver's database at dsn and pings it within ctx. Errors name the backend
// and the reason, never the password.
//
// The DSN is adjusted for dpproxy's needs: see openMySQL and openSQLite.
func Open(ctx context.Context, driver, dsn string, maxOpen int) (*Backend, error) {
	var (
		b    *Backend
		name string // the DSN without its password, for errors
		err  error
	)
	switch driver {
	case MySQL:
		b, name, err = openMySQL(dsn)
	case SQLite:
		b, name, maxOpen, err = openSQLite(dsn, maxOpen)
	case Postgres:
		b, name, err = openPostgres(dsn)
	default:
		return nil, fmt.Errorf("backend: unknown driver %q (want mysql, sqlite or postgres)", driver)
	}
	if err != nil {
		return nil, err
	}
	if maxOpen > 0 {
		b.DB.SetMaxOpenConns(maxOpen)
		// Keep as many idle as may be open: the default of two would close
		// and redial connections under steady concurrent load.
		b.DB.SetMaxIdleConns(maxOpen)
	}
	if err := b.DB.PingContext(ctx); err != nil {
		b.DB.Close()
		return nil, fmt.Errorf("backend: connect to %s %s: %w", driver, name, err)
	}
	if driver == MySQL {
		var version string
		if err := b.DB.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
			b.DB.Close()
			return nil, fmt.Errorf("backend: mysql %s: reading the server version: %w", name, err)
		}
		b.mariadb = strings.Contains(strings.ToLower(version), "mariadb")
	}
	b.Name = b.Database // PostgreSQL's is read below
	if driver == Postgres {
		if err := b.postgresSchema(ctx); err != nil {
			b.DB.Close()
			return nil, fmt.Errorf("backend: postgres %s: reading the current schema: %w", name, err)
		}
	}
	return b, nil
}

// Tables lists the base tables of the current database (no views, no system
// tables), sorted by name.
func (b *Backend) Tables(ctx context.Context) ([]string, error) {
	var query string
	switch b.Driver {
	case MySQL:
		query = `SELECT TABLE_NAME FROM information_schema.TABLES
			WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME`
	case SQLite:
		// pragma_table_list (SQLite 3.37) types shadow and virtual tables
		// apart from ordinary ones; sqlite_schema and sqlite_sequence are
		// internal.
		query = `SELECT name FROM pragma_table_list
			WHERE schema = ? AND type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`
	case Postgres:
		query = `SELECT table_name FROM information_schema.tables
			WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY table_name`
	default:
		return nil, fmt.Errorf("backend: list tables: driver %q is not supported", b.Driver)
	}
	rows, err := b.DB.QueryContext(ctx, query, b.Database)
	if err != nil {
		return nil, fmt.Errorf("backend: list the tables of %s database %s: %w", b.Driver, b.Database, err)
	}
	defer rows.Close()
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("backend: list the tables of %s database %s: %w", b.Driver, b.Database, err)
		}
		tables = append(tables, name)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("backend: list the tables of %s database %s: %w", b.Driver, b.Database, err)
	}
	return tables, nil
}

// Columns describes the columns of table in the current database, in
// declaration order. A missing table is an error wrapping ErrNoTable.
func (b *Backend) Columns(ctx context.Context, table string) ([]ColumnInfo, error) {
	var (
		cols []ColumnInfo
		err  error
	)
	switch b.Driver {
	case MySQL:
		cols, err = b.mysqlColumns(ctx, table)
	case SQLite:
		cols, err = b.sqliteColumns(ctx, table)
	case Postgres:
		cols, err = b.postgresColumns(ctx, table)
	default:
		err = fmt.Errorf("driver %q is not supported", b.Driver)
	}
	if err == nil && len(cols) == 0 {
		err = ErrNoTable
	}
	if err != nil {
		return nil, fmt.Errorf("backend: columns of %s table %s.%s: %w", b.Driver, b.Database, table, err)
	}
	return cols, nil
}

// Close closes the connection pool.
func (b *Backend) Close() error {
	return b.DB.Close()
}
