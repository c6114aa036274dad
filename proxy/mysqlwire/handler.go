package mysqlwire

import (
	"context"
	"fmt"
	"strings"

	"vitess.io/vitess/go/mysql"
	"vitess.io/vitess/go/mysql/replication"
	"vitess.io/vitess/go/mysql/sqlerror"
	"vitess.io/vitess/go/sqlescape"
	"vitess.io/vitess/go/sqltypes"
	querypb "vitess.io/vitess/go/vt/proto/query"
	"vitess.io/vitess/go/vt/vtenv"

	"github.com/dpproxy/dpproxy/proxy/admission"
)

// handler implements vitess's mysql.Handler on top of the engine's Session.
type handler struct {
	s *Server
}

var _ mysql.Handler = (*handler)(nil)

func state(c *mysql.Conn) *connState {
	st, _ := c.ClientData.(*connState)
	return st
}

// NewConnection is called before the handshake.
func (h *handler) NewConnection(c *mysql.Conn) {
	st := newConnState(h.s, c)
	c.ClientData = st
	c.StatusFlags |= mysql.ServerStatusAutocommit
	if !h.s.track(st) {
		st.cancel()
		c.Close()
		return
	}
	st.log.Debug("mysql connection accepted", "remote", c.RemoteAddr())
}

// ConnectionReady is called once the client is authenticated and, if it
// named a database, its session is open.
func (h *handler) ConnectionReady(c *mysql.Conn) {
	st := state(c)
	st.ready = true
	st.log = st.log.With(admission.String("user", c.User))
	if err := installStmtReader(c, h.s.cfg.MaxStatementBytes+statementSlack, st.log); err != nil {
		// Without it a client may send commands up to vitess's own limits;
		// the engine still refuses long statements, after reading them.
		if h.s.readerHookFailed.CompareAndSwap(false, true) {
			st.log.Error("mysql statement size limit not enforced on the wire", "error", err)
		}
	}
	if st.session == nil {
		if err := st.open(""); err != nil {
			st.log.Warn("cannot open session", admission.Error(err))
			st.openErr = err
		}
	}
	st.log.Debug("mysql connection ready")
}

// ConnectionClosed is called when the connection ends, after a failed
// handshake too.
func (h *handler) ConnectionClosed(c *mysql.Conn) {
	st := state(c)
	if st == nil {
		return
	}
	st.cancel()
	st.closeSession()
	if st.slot {
		h.s.adm.Release()
		st.slot = false
	}
	h.s.untrack(st)
}

// ComQuery receives COM_INIT_DB, as vitess's "use `db`", and during the
// handshake the database the client named, in the same form. COM_QUERY
// itself arrives in ComQueryMulti.
func (h *handler) ComQuery(c *mysql.Conn, query string, callback func(*sqltypes.Result) error) error {
	st := state(c)
	if !st.ready {
		return h.handshakeDB(st, query)
	}
	return st.statement("query", func(ctx context.Context, sess Session) error {
		st.log.Debug("mysql query", admission.String("sql", query))
		r, err := sess.Execute(ctx, query)
		if err != nil {
			return err
		}
		return st.send(r, callback)
	})
}

// handshakeDB opens the session in the database the client named in its
// handshake. vitess passes that name only as the statement it builds,
// "use " + sqlescape.EscapeID(db); this inverts vitess's own encoding (it
// parses no client SQL) so that Open sees the name.
func (h *handler) handshakeDB(st *connState, query string) error {
	quoted, ok := strings.CutPrefix(query, "use ")
	db, err := sqlescape.UnescapeID(quoted)
	if !ok || err != nil {
		st.log.Error("unexpected statement during the handshake", admission.String("sql", query))
		return errInternal
	}
	return wireError(st.open(db))
}

// ComQueryMulti receives COM_QUERY. The text goes to the engine whole, even
// with CLIENT_MULTI_STATEMENTS: the engine, which parses it, decides.
func (h *handler) ComQueryMulti(c *mysql.Conn, sql string, callback func(qr sqltypes.QueryResponse, more bool, firstPacket bool) error) error {
	return h.ComQuery(c, sql, func(qr *sqltypes.Result) error {
		return callback(sqltypes.QueryResponse{QueryResult: qr}, false, true)
	})
}

// ComPrepare receives COM_STMT_PREPARE.
func (h *handler) ComPrepare(c *mysql.Conn, query string) ([]*querypb.Field, uint16, error) {
	st := state(c)
	var fields []*querypb.Field
	var params uint16
	err := st.statement("prepare", func(ctx context.Context, sess Session) error {
		st.log.Debug("mysql prepare", admission.String("sql", query))
		p, err := sess.Prepare(ctx, query)
		if err != nil {
			return err
		}
		if p == nil || p.ParamCount < 0 || p.ParamCount > 0xffff {
			return fmt.Errorf("mysqlwire: the engine prepared %v", p)
		}
		st.forgetClosed(query)
		st.prepared[query] = p
		fields = toFields(p.Columns)
		params = uint16(p.ParamCount)
		return nil
	})
	return fields, params, err
}

// forgetClosed drops the engine statements whose text no open vitess
// statement has any more: vitess handles COM_STMT_CLOSE without telling
// the handler. keep is the statement being prepared.
func (st *connState) forgetClosed(keep string) {
	open := make(map[string]bool, len(st.conn.PrepareData))
	for _, pd := range st.conn.PrepareData {
		open[pd.PrepareStmt] = true
	}
	for sql := range st.prepared {
		if sql != keep && !open[sql] {
			delete(st.prepared, sql)
		}
	}
}

// ComStmtExecute receives COM_STMT_EXECUTE; vitess has decoded the
// parameters and encodes the result in the binary protocol.
func (h *handler) ComStmtExecute(c *mysql.Conn, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	st := state(c)
	return st.statement("execute", func(ctx context.Context, sess Session) error {
		args, err := bindArgs(prepare)
		if err != nil {
			return err
		}
		p, ok := st.prepared[prepare.PrepareStmt]
		if !ok {
			// Not ours any more (it was pruned): prepare it again.
			if p, err = sess.Prepare(ctx, prepare.PrepareStmt); err != nil {
				return err
			}
			st.prepared[prepare.PrepareStmt] = p
		}
		st.log.Debug("mysql execute", admission.String("sql", p.SQL), "args", len(args))
		r, err := sess.ExecutePrepared(ctx, p, args)
		if err != nil {
			return err
		}
		return st.send(r, callback)
	})
}

// ComResetConnection starts a fresh session in the same database, as
// MySQL's COM_RESET_CONNECTION resets session state but keeps the login.
// vitess answers OK regardless; if the new session cannot be opened the
// next command reports why and closes the connection.
func (h *handler) ComResetConnection(c *mysql.Conn) {
	st := state(c)
	if st.session == nil {
		return
	}
	db := st.session.Database()
	st.closeSession()
	if err := st.open(db); err != nil {
		st.log.Warn("cannot reopen session on reset", admission.Error(err))
		st.openErr = err
	}
}

// WarningCount is sent in the EOF or OK packet that ends a result.
func (h *handler) WarningCount(c *mysql.Conn) uint16 {
	return state(c).warnings
}

// errReplication refuses the replication protocol: dpproxy is no primary.
var errReplication = sqlerror.NewSQLError(sqlerror.ERNotSupportedYet, sqlerror.SSClientError,
	"dpproxy does not support replication")

func (h *handler) ComRegisterReplica(*mysql.Conn, string, uint16, string, string) error {
	return errReplication
}

func (h *handler) ComBinlogDump(*mysql.Conn, string, uint32) error { return errReplication }

func (h *handler) ComBinlogDumpGTID(*mysql.Conn, string, uint64, replication.GTIDSet, uint16) error {
	return errReplication
}

// Env is vitess's environment: collations and the parser vitess uses to
// split a multi-statement COM_STMT_PREPARE.
func (h *handler) Env() *vtenv.Environment { return h.s.env }
