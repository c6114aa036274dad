package pgwire

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/dpproxy/dpproxy/proxy"
)

// simpleQuery answers a Query message as PostgreSQL's exec_simple_query
// does: the engine cuts the text into statements, which run in turn, each
// an engine call of its own (its own limits, charge, timeout and cancel).
// Each answers with its rows and CommandComplete; on the first error the
// ErrorResponse is sent and the statements after it are skipped; one
// ReadyForQuery ends it all. Text with no statement (white space, ';',
// comments) is answered EmptyQueryResponse. Like PostgreSQL, a simple
// query drops the unnamed statement and portal. False: the client is gone.
func (c *conn) simpleQuery(sql string) bool {
	delete(c.stmts, "")
	delete(c.portals, "")
	var stmts []string
	var err error
	if !blank(sql) {
		sess := c.session
		_, err = c.guard("split", func(context.Context) (*proxy.Result, error) {
			stmts, err = sess.Split(sql)
			return nil, err
		})
	}
	switch {
	case err != nil:
		c.sendError(err)
	case len(stmts) == 0:
		c.be.Send(&pgproto3.EmptyQueryResponse{})
	}
	for _, stmt := range stmts {
		if err != nil {
			break
		}
		var res *proxy.Result
		res, err = c.call("query", func(ctx context.Context, sess Session) (*proxy.Result, error) {
			return sess.Execute(ctx, stmt)
		})
		if err == nil {
			err = c.sendResult(res, nil)
		}
		if err != nil {
			c.sendError(err)
		} else if c.unflushed > flushThreshold && !c.flush() {
			return false
		}
	}
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: c.txStatus})
	return c.flush()
}

// blank reports a query string with nothing but white space and
// semicolons, which PostgreSQL answers with EmptyQueryResponse, without
// asking the engine.
func blank(sql string) bool {
	return strings.Trim(sql, " \t\r\n\f\v;") == ""
}

// sendResult sends a whole result as the simple protocol does: rows in
// text, or the command's tag.
func (c *conn) sendResult(r *proxy.Result, formats []int16) error {
	if r == nil {
		return errorf(stateInternal, "the engine returned no result")
	}
	var rows []*pgproto3.DataRow
	if r.Columns != nil {
		var err error
		if rows, err = encodeRows(r, formats); err != nil {
			return err
		}
	}
	c.sendNotices(r)
	if r.Columns != nil {
		c.be.Send(rowDescription(r.Columns, formats))
		c.sendRows(rows)
	}
	c.complete(r, len(rows))
	return nil
}

// sendRows queues DataRow messages.
func (c *conn) sendRows(rows []*pgproto3.DataRow) {
	for _, row := range rows {
		c.be.Send(row)
		for _, v := range row.Values {
			c.unflushed += len(v) + 4
		}
	}
}

// sendNotices passes the engine's warnings on as NoticeResponse.
func (c *conn) sendNotices(r *proxy.Result) {
	for _, w := range r.Warnings {
		c.be.Send(&pgproto3.NoticeResponse{Severity: "WARNING", SeverityUnlocalized: "WARNING", Code: stateWarning, Message: w})
	}
}

// complete sends CommandComplete and follows the transaction status from
// the tag: the engine accepts BEGIN/COMMIT so that drivers work, and
// drivers (psycopg 3, pgjdbc) look at the status ReadyForQuery reports.
// An error does not abort the transaction: every statement is a read.
func (c *conn) complete(r *proxy.Result, rows int) {
	tag := commandTag(r, rows)
	switch tag {
	case "BEGIN", "START TRANSACTION":
		c.txStatus = txInTx
	case "COMMIT", "ROLLBACK":
		c.txStatus = txIdle
	}
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
}
