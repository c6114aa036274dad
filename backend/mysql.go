package backend

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/go-sql-driver/mysql"
)

// openMySQL parses dsn (go-sql-driver/mysql format) and opens a pool without
// connecting. It overrides three settings whatever the DSN says:
//   - parseTime=false: DATE/DATETIME values reach the proxy as the server's
//     text and are relayed unchanged, with no time-zone conversion.
//   - multiStatements=false: one Exec runs one statement, so nothing the proxy
//     sends can smuggle a second one.
//   - allowAllFiles=false: the server cannot ask for files on the proxy's host
//     through LOAD DATA LOCAL INFILE.
//
// interpolateParams is left as the DSN sets it: the proxy sends SQL it rendered
// itself, without placeholders, so it rarely matters.
func openMySQL(dsn string) (*Backend, string, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		// ParseDSN's errors describe the syntax, never echo the password.
		return nil, "", fmt.Errorf("backend: parse the mysql DSN: %w", err)
	}
	name := fmt.Sprintf("%s@%s(%s)/%s", cfg.User, cfg.Net, cfg.Addr, cfg.DBName)
	if cfg.DBName == "" {
		return nil, "", fmt.Errorf("backend: the mysql DSN %s names no database: add it after the slash", name)
	}
	cfg.ParseTime = false
	cfg.MultiStatements = false
	cfg.AllowAllFiles = false
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("backend: mysql %s: %w", name, err)
	}
	return &Backend{DB: sql.OpenDB(connector), Driver: MySQL, Database: cfg.DBName}, name, nil
}

func (b *Backend) mysqlColumns(ctx context.Context, table string) ([]ColumnInfo, error) {
	rows, err := b.DB.QueryContext(ctx, `SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_KEY, COLUMN_DEFAULT
		FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, b.Database, table)
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
		if err := rows.Scan(&c.Name, &c.Type, &nullable, &c.Key, &def); err != nil {
			return nil, err
		}
		c.Nullable = nullable == "YES"
		// MariaDB (10.2.7+) reports "no default" and DEFAULT NULL as the
		// word NULL, MySQL as SQL NULL; a string default is quoted in
		// MariaDB, so the bare word cannot be a string.
		if def.Valid && def.String != "NULL" {
			c.Default = &def.String
		}
		cols = append(cols, c)
	}
	return cols, rows.Err()
}
