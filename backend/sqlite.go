package backend

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// busyTimeoutMillis is how long a SQLite connection waits for another's write
// lock before failing with SQLITE_BUSY.
const busyTimeoutMillis = 5000

// openSQLite opens a pool on a SQLite file path or URI (modernc.org/sqlite
// format), with the DSN adjusted by sqliteDSN. A private in-memory database
// (":memory:", "file::memory:" or mode=memory without cache=shared) exists once
// per connection, so its pool is capped at one connection: otherwise each pooled
// connection would see another, empty database. It returns the possibly lowered
// maxOpen.
func openSQLite(dsn string, maxOpen int) (*Backend, string, int, error) {
	dsn, path, private, err := sqliteDSN(dsn)
	if err != nil {
		return nil, "", 0, err
	}
	if private {
		maxOpen = 1
	}
	db, err := sql.Open(SQLite, dsn)
	if err != nil {
		return nil, "", 0, fmt.Errorf("backend: open sqlite %s: %w", path, err)
	}
	return &Backend{DB: db, Driver: SQLite, Database: "main"}, path, maxOpen, nil
}

// sqliteDSN adds to dsn, unless it sets them already, busy_timeout, so that
// concurrent writers wait instead of failing, and journal_mode=WAL, so that
// readers do not block the writer (https://www.sqlite.org/wal.html). It also
// returns the DSN's path (for messages) and whether it names a private
// in-memory database.
func sqliteDSN(dsn string) (adjusted, path string, private bool, err error) {
	if dsn == "" {
		return "", "", false, fmt.Errorf("backend: the sqlite DSN is empty: give a file path or \":memory:\"")
	}
	path, rawQuery, _ := strings.Cut(dsn, "?")
	query, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "", "", false, fmt.Errorf("backend: parse the parameters of sqlite DSN %s: %w", path, err)
	}
	var extra []string
	if !setsPragma(query, "busy_timeout", "_busy_timeout", "_timeout") {
		extra = append(extra, fmt.Sprintf("_pragma=busy_timeout(%d)", busyTimeoutMillis))
	}
	if !setsPragma(query, "journal_mode", "_journal_mode", "_journal") {
		extra = append(extra, "_pragma=journal_mode(WAL)")
	}
	adjusted = dsn
	if len(extra) > 0 {
		sep := "&"
		if rawQuery == "" {
			sep = "?"
		}
		adjusted = strings.TrimSuffix(dsn, "?") + sep + strings.Join(extra, "&")
	}
	memory := path == ":memory:" || path == "file::memory:" || query.Get("mode") == "memory"
	return adjusted, path, memory && query.Get("cache") != "shared", nil
}

// setsPragma reports whether query sets the pragma, either through one of the
// driver's shorthand keys or through a _pragma=name(...) parameter.
func setsPragma(query url.Values, pragma string, keys ...string) bool {
	for _, k := range keys {
		if _, ok := query[k]; ok {
			return true
		}
	}
	for _, p := range query["_pragma"] {
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(p)), pragma) {
			return true
		}
	}
	return false
}

func (b *Backend) sqliteColumns(ctx context.Context, table string) ([]ColumnInfo, error) {
	// The table-valued form of PRAGMA table_info takes the table and schema
	// as bound parameters, so no identifier is spliced into SQL text.
	rows, err := b.DB.QueryContext(ctx, `SELECT name, type, "notnull", dflt_value, pk
		FROM pragma_table_info(?, ?) ORDER BY cid`, table, b.Database)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []ColumnInfo
	for rows.Next() {
		var (
			c       ColumnInfo
			notNull bool
			pk      int
			def     sql.NullString
		)
		if err := rows.Scan(&c.Name, &c.Type, &notNull, &def, &pk); err != nil {
			return nil, err
		}
		c.Nullable = !notNull
		if pk > 0 {
			c.Key = "PRI"
		}
		if def.Valid && !strings.EqualFold(def.String, "NULL") {
			c.Default = &def.String
		}
		cols = append(cols, c)
	}
	return cols, rows.Err()
}
