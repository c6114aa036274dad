package backend

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"

	"github.com/lib/pq"
)

// openPostgres opens a lib/pq pool on dsn (a URL or key=value connection
// string). The database and schema are read from the server at the first
// ping; Database is the schema whose tables the proxy serves (the first of
// the search path, normally "public").
func openPostgres(dsn string) (*Backend, string, error) {
	connector, err := pq.NewConnector(dsn)
	if err != nil {
		return nil, "", fmt.Errorf("backend: parse the postgres DSN %s: %w", redactPostgres(dsn), err)
	}
	return &Backend{DB: sql.OpenDB(connector), Driver: Postgres}, redactPostgres(dsn), nil
}

// redactPostgres removes the password from a postgres DSN for messages.
func redactPostgres(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		if u.User != nil {
			u.User = url.User(u.User.Username())
		}
		return u.Redacted()
	}
	var kept []string
	for _, f := range strings.Fields(dsn) {
		if !strings.HasPrefix(strings.ToLower(f), "password=") {
			kept = append(kept, f)
		}
	}
	return strings.Join(kept, " ")
}

// postgresSchema reads the schema unqualified names resolve to.
func (b *Backend) postgresSchema(ctx context.Context) error {
	var schema sql.NullString
	var name string
	if err := b.DB.QueryRowContext(ctx, "SELECT current_schema(), current_database()").Scan(&schema, &name); err != nil {
		return err
	}
	if !schema.Valid {
		return fmt.Errorf("the search path names no existing schema")
	}
	b.Database, b.Name = schema.String, name
	return nil
}

func (b *Backend) postgresColumns(ctx context.Context, table string) ([]ColumnInfo, error) {
	rows, err := b.DB.QueryContext(ctx, `SELECT c.column_name, c.data_type, c.is_nullable, c.column_default,
			COALESCE((SELECT 'PRI' FROM information_schema.table_constraints tc
				JOIN information_schema.key_column_usage k
				  ON k.constraint_name = tc.constraint_name AND k.table_schema = tc.table_schema
				WHERE tc.table_schema = c.table_schema AND tc.table_name = c.table_name
				  AND tc.constraint_type = 'PRIMARY KEY' AND k.column_name = c.column_name LIMIT 1), '')
		FROM information_schema.columns c
		WHERE c.table_schema = $1 AND c.table_name = $2 ORDER BY c.ordinal_position`, b.Database, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []ColumnInfo
	for rows.Next() {
		var (
			c        ColumnInfo
			nullable string
			def      sql.NullString
		)
		if err := rows.Scan(&c.Name, &c.Type, &nullable, &def, &c.Key); err != nil {
			return nil, err
		}
		c.Nullable = nullable == "YES"
		if def.Valid {
			c.Default = &def.String
		}
		cols = append(cols, c)
	}
	return cols, rows.Err()
}
