package backend

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"time"
)

// Pinned is one backend connection held for one statement of dpproxy's: it
// is checked before the statement is charged, so that an outage is told
// apart from a failure of the statement itself, and every query on it runs
// under a timeout the backend itself enforces.
//
// Why the backend must enforce it: a client-side deadline only closes dpproxy's
// socket; MariaDB and PostgreSQL go on running the statement, so a slow
// statement would still tie up the server (and go-sql-driver does not send
// KILL QUERY on cancellation).
type Pinned struct {
	b       *Backend
	conn    *sql.Conn
	timeout time.Duration
}

// Pin takes a connection from the pool and proves it answers; on
// PostgreSQL it also sets the session's statement_timeout (the SET is the
// proof). timeout ≤ 0 means the time left before ctx's deadline, if any.
// An error from Pin means no statement of the caller's has reached the
// backend.
func (b *Backend) Pin(ctx context.Context, timeout time.Duration) (*Pinned, error) {
	if timeout <= 0 {
		if d, ok := ctx.Deadline(); ok {
			timeout = time.Until(d)
			if timeout <= 0 {
				return nil, context.DeadlineExceeded
			}
		}
	}
	conn, err := b.DB.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("backend: taking a connection: %w", err)
	}
	p := &Pinned{b: b, conn: conn, timeout: timeout}
	switch {
	case b.Driver == Postgres && timeout > 0:
		// statement_timeout is in milliseconds; it stays on the pooled
		// connection, and every Pin sets it again.
		ms := max(int64(math.Ceil(float64(timeout)/float64(time.Millisecond))), 1)
		_, err = conn.ExecContext(ctx, fmt.Sprintf("SET statement_timeout = %d", ms))
	default:
		err = conn.PingContext(ctx)
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("backend: the %s backend does not answer: %w", b.Driver, err)
	}
	return p, nil
}

// QueryContext runs one query on the pinned connection under the backend's
// own timeout: MariaDB's SET STATEMENT max_statement_time = s FOR … (MariaDB
// 10.1+, "Aborting statements that exceed a certain time to execute"; Oracle
// MySQL has no such prefix, and there only ctx bounds the statement),
// PostgreSQL's statement_timeout set by Pin; SQLite runs in-process and
// stops when ctx does (modernc.org/sqlite interrupts on cancellation).
func (p *Pinned) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if p.b.Driver == MySQL && p.b.mariadb && p.timeout > 0 && isSelect(query) {
		// max_statement_time is in seconds, fractions allowed.
		query = fmt.Sprintf("SET STATEMENT max_statement_time = %.3f FOR %s", max(p.timeout.Seconds(), 0.001), query)
	}
	return p.conn.QueryContext(ctx, query, args...)
}

// isSelect reports whether q is a query SET STATEMENT … FOR may prefix.
func isSelect(q string) bool {
	q = strings.TrimLeft(q, " \t\r\n(")
	return len(q) >= 6 && (strings.EqualFold(q[:6], "select") || strings.EqualFold(q[:4], "with"))
}

// Check has the backend prepare query without running it: parse, name
// resolution and type checking, from the statement and the schema alone
// (PostgreSQL's Parse message, MySQL's COM_STMT_PREPARE, sqlite3_prepare).
// No row is read, so what it reports cannot depend on the data.
func (p *Pinned) Check(ctx context.Context, query string) error {
	st, err := p.conn.PrepareContext(ctx, query)
	if err != nil {
		return err
	}
	return st.Close()
}

// Close returns the connection to the pool.
func (p *Pinned) Close() error { return p.conn.Close() }
