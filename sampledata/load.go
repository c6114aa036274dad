package sampledata

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// batchRows is how many rows one INSERT carries. At 15 columns that is 7,500
// placeholders, well under the limits of SQLite (32,766 since 3.32), MySQL and
// PostgreSQL (65,535).
const batchRows = 500

// dialect holds what differs between backends when creating and filling a table.
type dialect struct {
	name        string
	columnType  map[string]string // sampledata type → SQL type
	placeholder func(n int) string
	quote       func(ident string) string
	// existsQuery counts base tables named $1 in the current database/schema.
	existsQuery string
}

var dialects = map[string]dialect{
	"mysql": {
		name:        "mysql",
		columnType:  map[string]string{TypeInt: "BIGINT", TypeFloat: "DOUBLE", TypeString: "VARCHAR(64)"},
		placeholder: func(int) string { return "?" },
		quote:       func(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" },
		existsQuery: "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
	},
	"postgres": {
		name:        "postgres",
		columnType:  map[string]string{TypeInt: "BIGINT", TypeFloat: "DOUBLE PRECISION", TypeString: "TEXT"},
		placeholder: func(n int) string { return "$" + strconv.Itoa(n) },
		quote:       quoteDouble,
		existsQuery: "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1",
	},
	"sqlite": {
		name:        "sqlite",
		columnType:  map[string]string{TypeInt: "INTEGER", TypeFloat: "REAL", TypeString: "TEXT"},
		placeholder: func(int) string { return "?" },
		quote:       quoteDouble,
		existsQuery: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
	},
}

func quoteDouble(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// Load creates the tables "adult", "pums", "pums_person" and "education_levels" in db and fills them, each table in
// one transaction with multi-row INSERTs. dialect is "mysql", "postgres" or
// "sqlite". A table that already holds the expected number of rows is left alone,
// so Load can run at every start; a table that exists with another row count is
// an error, because Load will not guess whether to replace someone's data. All
// tables are checked before any is created, so that error leaves db unchanged.
func Load(ctx context.Context, db *sql.DB, dialect string) error {
	d, ok := dialects[dialect]
	if !ok {
		return fmt.Errorf("sampledata: load: unknown dialect %q (want mysql, postgres or sqlite)", dialect)
	}
	var missing []Table
	for _, t := range Tables() {
		exists, err := existing(ctx, db, d, t)
		if err != nil {
			return err
		}
		if !exists {
			missing = append(missing, t)
		}
	}
	for _, t := range missing {
		if err := create(ctx, db, d, t); err != nil {
			return err
		}
	}
	return nil
}

// existing reports whether t already exists with all its rows, and fails if it
// exists with any other number of rows.
func existing(ctx context.Context, db *sql.DB, d dialect, t Table) (bool, error) {
	var tables int
	if err := db.QueryRowContext(ctx, d.existsQuery, t.Name).Scan(&tables); err != nil {
		return false, fmt.Errorf("sampledata: check whether table %s exists: %w", t.Name, err)
	}
	if tables == 0 {
		return false, nil
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+d.quote(t.Name)).Scan(&n); err != nil {
		return false, fmt.Errorf("sampledata: count the rows of existing table %s: %w", t.Name, err)
	}
	if n != t.RowCount {
		return false, fmt.Errorf("sampledata: table %s already exists with %d rows, want %d: drop it or load into another database", t.Name, n, t.RowCount)
	}
	return true, nil
}

// create creates t and inserts its rows.
func create(ctx context.Context, db *sql.DB, d dialect, t Table) error {
	// CREATE TABLE runs outside the transaction: MySQL commits implicitly on
	// DDL, so only the inserts can be atomic everywhere. If they fail, the
	// empty table is dropped so that a retry starts clean.
	if _, err := db.ExecContext(ctx, createTable(d, t)); err != nil {
		return fmt.Errorf("sampledata: create table %s: %w", t.Name, err)
	}
	if err := insertRows(ctx, db, d, t); err != nil {
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if _, dropErr := db.ExecContext(cleanup, "DROP TABLE "+d.quote(t.Name)); dropErr != nil {
			err = errors.Join(err, fmt.Errorf("sampledata: drop the half-loaded table %s: %w", t.Name, dropErr))
		}
		return err
	}
	return nil
}

func createTable(d dialect, t Table) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	b.WriteString(d.quote(t.Name))
	b.WriteString(" (")
	for i, c := range t.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d.quote(c.Name))
		b.WriteByte(' ')
		b.WriteString(d.columnType[c.Type])
		b.WriteString(" NOT NULL")
	}
	b.WriteString(")")
	return b.String()
}

// insertSQL is INSERT INTO t (cols) VALUES (...), ... for rows rows.
func insertSQL(d dialect, t Table, rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(d.quote(t.Name))
	b.WriteString(" (")
	for i, c := range t.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d.quote(c.Name))
	}
	b.WriteString(") VALUES ")
	n := 0
	for r := range rows {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for i := range t.Columns {
			if i > 0 {
				b.WriteString(", ")
			}
			n++
			b.WriteString(d.placeholder(n))
		}
		b.WriteByte(')')
	}
	return b.String()
}

func insertRows(ctx context.Context, db *sql.DB, d dialect, t Table) (err error) {
	_, next, err := Rows(t.Name)
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sampledata: begin loading %s: %w", t.Name, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback() // the error that made us roll back is the one to report
		}
	}()

	full, err := tx.PrepareContext(ctx, insertSQL(d, t, batchRows))
	if err != nil {
		return fmt.Errorf("sampledata: prepare the insert into %s: %w", t.Name, err)
	}
	defer full.Close()

	args := make([]any, 0, batchRows*len(t.Columns))
	loaded := 0
	for {
		row, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		args = append(args, row...)
		if len(args) == cap(args) {
			if _, err := full.ExecContext(ctx, args...); err != nil {
				return fmt.Errorf("sampledata: insert rows %d..%d into %s: %w", loaded+1, loaded+batchRows, t.Name, err)
			}
			loaded += batchRows
			args = args[:0]
		}
	}
	if rest := len(args) / len(t.Columns); rest > 0 {
		if _, err := tx.ExecContext(ctx, insertSQL(d, t, rest), args...); err != nil {
			return fmt.Errorf("sampledata: insert rows %d..%d into %s: %w", loaded+1, loaded+rest, t.Name, err)
		}
		loaded += rest
	}
	if loaded != t.RowCount {
		return fmt.Errorf("sampledata: loaded %d rows into %s, want %d", loaded, t.Name, t.RowCount)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sampledata: commit the rows of %s: %w", t.Name, err)
	}
	return nil
}
