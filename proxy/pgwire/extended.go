package pgwire

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/dpproxy/dpproxy/proxy"
)

// Caps on what one connection may keep open, against a client that
// prepares without ever closing.
const (
	maxStatements = 10000
	maxPortals    = 10000
)

// statement is a prepared statement (Parse).
type statement struct {
	name string
	p    *proxy.Prepared // nil for an empty query
	// oids are the parameter types: the client's where it gave one, else
	// 0 (unspecified). There are at least p.ParamCount.
	oids []uint32
}

// portal is a bound statement (Bind). It runs once, at its first Execute
// or, when the statement's columns were unknown, at Describe; Execute
// with a row limit then pages through the kept result.
type portal struct {
	stmt        *statement
	args        []proxy.Value
	formatCodes []int16 // as the client sent them
	formats     []int16 // one per column, once the columns are known
	res         *proxy.Result
	rows        []*pgproto3.DataRow
	sent        int  // rows already sent
	ran         bool // res and rows are set
}

// parse answers Parse.
func (c *conn) parse(m *pgproto3.Parse) error {
	if m.Name != "" {
		if _, ok := c.stmts[m.Name]; ok {
			return errorf(stateDuplicateStmt, "prepared statement %q already exists", m.Name)
		}
		if len(c.stmts) >= maxStatements {
			return errorf("54000", "too many prepared statements (%d); close some", maxStatements)
		}
	}
	st := &statement{name: m.Name, oids: slices.Clone(m.ParameterOIDs)}
	if !blank(m.Query) {
		sql := m.Query
		var p *proxy.Prepared
		_, err := c.call("prepare", func(ctx context.Context, sess Session) (*proxy.Result, error) {
			var err error
			p, err = sess.Prepare(ctx, sql)
			return nil, err
		})
		if err != nil {
			return err
		}
		if p == nil || p.ParamCount < 0 {
			return errorf(stateInternal, "the engine prepared %v", p)
		}
		st.p = p
		for len(st.oids) < p.ParamCount {
			st.oids = append(st.oids, 0)
		}
	}
	c.stmts[m.Name] = st
	c.be.Send(&pgproto3.ParseComplete{})
	return nil
}

// statementNamed finds a prepared statement.
func (c *conn) statementNamed(name string) (*statement, error) {
	st, ok := c.stmts[name]
	if !ok {
		if name == "" {
			return nil, errorf(stateUndefinedStmt, "unnamed prepared statement does not exist")
		}
		return nil, errorf(stateUndefinedStmt, "prepared statement %q does not exist", name)
	}
	return st, nil
}

// portalNamed finds a portal.
func (c *conn) portalNamed(name string) (*portal, error) {
	p, ok := c.portals[name]
	if !ok {
		return nil, errorf(stateUndefinedCursor, "portal %q does not exist", name)
	}
	return p, nil
}

// bind answers Bind: it decodes the parameters now, while the message's
// buffer is valid.
func (c *conn) bind(m *pgproto3.Bind) error {
	st, err := c.statementNamed(m.PreparedStatement)
	if err != nil {
		return err
	}
	if m.DestinationPortal != "" {
		if _, ok := c.portals[m.DestinationPortal]; ok {
			return errorf(stateDuplicateCursor, "cursor %q already exists", m.DestinationPortal)
		}
		if len(c.portals) >= maxPortals {
			return errorf("54000", "too many open portals (%d); close some", maxPortals)
		}
	}
	if len(m.Parameters) != len(st.oids) {
		return errorf(stateProtocol, "bind message supplies %d parameters, but prepared statement %q requires %d",
			len(m.Parameters), st.name, len(st.oids))
	}
	args, err := bindArgs(st.oids, m.ParameterFormatCodes, m.Parameters)
	if err != nil {
		return err
	}
	p := &portal{stmt: st, args: args, formatCodes: slices.Clone(m.ResultFormatCodes)}
	if st.p != nil && st.p.Columns != nil {
		if p.formats, err = resultFormats(p.formatCodes, len(st.p.Columns)); err != nil {
			return err
		}
	}
	c.portals[m.DestinationPortal] = p
	c.be.Send(&pgproto3.BindComplete{})
	return nil
}

// describe answers Describe of a statement or a portal.
func (c *conn) describe(m *pgproto3.Describe) error {
	switch m.ObjectType {
	case 'S':
		st, err := c.statementNamed(m.Name)
		if err != nil {
			return err
		}
		// The types the client declared, 0 (unspecified) where it declared
		// none: dpproxy does not infer parameter types as PostgreSQL does,
		// and 0 lets a driver send any value in text, which the engine
		// then reads in context (pgx encodes by the Go type; announcing
		// text would make it refuse an int).
		c.be.Send(&pgproto3.ParameterDescription{ParameterOIDs: st.oids})
		if st.p == nil || len(st.p.Columns) == 0 {
			// Also when the engine could not tell the columns without
			// running the statement, which needs parameters it does not
			// have yet; drivers describe the portal before reading rows.
			c.be.Send(&pgproto3.NoData{})
			return nil
		}
		c.be.Send(rowDescription(st.p.Columns, nil))
		return nil
	case 'P':
		p, err := c.portalNamed(m.Name)
		if err != nil {
			return err
		}
		if p.stmt.p == nil {
			c.be.Send(&pgproto3.NoData{})
			return nil
		}
		cols := p.stmt.p.Columns
		if cols == nil {
			// The shape is known only by running it: run it now and keep
			// the result for Execute (a portal runs once).
			if err := c.run(p); err != nil {
				return err
			}
			cols = p.res.Columns
		}
		if len(cols) == 0 {
			c.be.Send(&pgproto3.NoData{})
			return nil
		}
		c.be.Send(rowDescription(cols, p.formats))
		return nil
	}
	return errorf(stateProtocol, "invalid DESCRIBE message subtype %d", m.ObjectType)
}

// run executes a portal's statement and encodes its rows.
func (c *conn) run(p *portal) error {
	prep, args := p.stmt.p, p.args
	res, err := c.call("execute", func(ctx context.Context, sess Session) (*proxy.Result, error) {
		return sess.ExecutePrepared(ctx, prep, args[:prep.ParamCount])
	})
	if err != nil {
		return err
	}
	if res == nil {
		return errorf(stateInternal, "the engine returned no result")
	}
	if res.Columns != nil {
		if p.formats == nil || len(p.formats) != len(res.Columns) {
			if p.formats, err = resultFormats(p.formatCodes, len(res.Columns)); err != nil {
				return err
			}
		}
		if p.rows, err = encodeRows(res, p.formats); err != nil {
			return err
		}
	}
	p.res, p.ran = res, true
	c.sendNotices(res)
	return nil
}

// execute answers Execute: up to MaxRows rows (0: all), then
// PortalSuspended if rows remain, else CommandComplete.
func (c *conn) execute(m *pgproto3.Execute) error {
	p, err := c.portalNamed(m.Portal)
	if err != nil {
		return err
	}
	if p.stmt.p == nil {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return nil
	}
	if !p.ran {
		if err := c.run(p); err != nil {
			return err
		}
	}
	if p.res.Columns == nil {
		c.complete(p.res, 0)
		return nil
	}
	rest := p.rows[p.sent:]
	if m.MaxRows > 0 && uint64(len(rest)) > uint64(m.MaxRows) {
		c.sendRows(rest[:m.MaxRows])
		p.sent += int(m.MaxRows)
		c.be.Send(&pgproto3.PortalSuspended{})
		return nil
	}
	c.sendRows(rest)
	p.sent += len(rest)
	c.complete(p.res, len(rest))
	return nil
}

// closeObject answers Close. Closing what does not exist is no error.
// Closing a statement closes the portals bound from it, as in PostgreSQL.
func (c *conn) closeObject(m *pgproto3.Close) error {
	switch m.ObjectType {
	case 'S':
		if st, ok := c.stmts[m.Name]; ok {
			delete(c.stmts, m.Name)
			for name, p := range c.portals {
				if p.stmt == st {
					delete(c.portals, name)
				}
			}
		}
	case 'P':
		delete(c.portals, m.Name)
	default:
		return errorf(stateProtocol, "invalid CLOSE message subtype %d", m.ObjectType)
	}
	c.be.Send(&pgproto3.CloseComplete{})
	return nil
}

// sync ends an extended-protocol batch. Outside a transaction block, Sync
// ends PostgreSQL's implicit transaction, which drops every portal.
func (c *conn) sync() {
	c.skipping = false
	if c.txStatus == txIdle {
		clear(c.portals)
	}
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: c.txStatus})
}
