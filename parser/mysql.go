package parser

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	tidb "github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/terror"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// mysqlParsers holds TiDB parsers: a *tidb.Parser keeps scratch state
// between calls and must not be shared by goroutines, but building one
// allocates a large yacc stack, so they are reused.
var mysqlParsers = sync.Pool{New: func() any { return newMySQLParser() }}

// mysqlSQLMode is MySQL's default SQL mode: ANSI_QUOTES is off (a
// double-quoted token is a string, as MySQL clients expect) and
// PIPES_AS_CONCAT is off (|| is OR).
var mysqlSQLMode = func() mysql.SQLMode {
	mode, err := mysql.GetSQLMode(mysql.DefaultSQLMode)
	if err != nil {
		panic("parser: MySQL's default SQL mode does not parse: " + err.Error())
	}
	return mode
}()

func newMySQLParser() *tidb.Parser {
	p := tidb.New()
	p.SetSQLMode(mysqlSQLMode)
	// Window functions must parse so that they can be refused by name
	// (Func.Over) rather than fail as syntax errors.
	p.EnableWindowFunc(true)
	return p
}

// parseMySQL parses one MySQL statement with the TiDB parser and converts
// its AST into the model.
func parseMySQL(sql string) (stmt Statement, params int, err error) {
	p := mysqlParsers.Get().(*tidb.Parser)
	defer func() {
		if r := recover(); r != nil {
			// TiDB's value driver panics on literals it does not implement
			// rather than returning an error. The parser's scratch state is
			// suspect after a panic, so it is dropped instead of pooled.
			stmt, params, err = nil, 0, &SyntaxError{Msg: fmt.Sprintf("the MySQL parser cannot handle this statement: %v", r)}
			return
		}
		// Only now: the returned statement slice is the parser's own
		// scratch, reused by its next ParseSQL.
		mysqlParsers.Put(p)
	}()
	stmts, _, err := p.ParseSQL(sql)
	if err != nil {
		return nil, 0, mysqlSyntaxError(err)
	}
	switch len(stmts) {
	case 0:
		return &Empty{}, 0, nil
	case 1:
	default:
		return nil, 0, &UnsupportedError{What: "multi-statements"}
	}
	n := numberParams(stmts[0], sql)
	if stmt, err = convertMySQLStmt(stmts[0]); err != nil {
		return nil, 0, err
	}
	return stmt, n, nil
}

// mysqlSyntaxPrefix is how MySQL (error 1064) and TiDB's server introduce
// the position the parser gives.
const mysqlSyntaxPrefix = "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use "

// mysqlSyntaxError keeps the TiDB parser's message. The grammar's own errors
// are bare positions ("line 1 column 5 near ..."), which TiDB's server
// prefixes like MySQL does; coded errors (unknown character set, ...) carry
// their full MySQL message already.
func mysqlSyntaxError(err error) error {
	var terr *terror.Error
	if errors.As(err, &terr) {
		return &SyntaxError{Msg: terr.GetMsg()}
	}
	return &SyntaxError{Msg: mysqlSyntaxPrefix + strings.TrimSpace(err.Error())}
}

// numberParams gives every "?" its 0-based position in the text (the order
// in which a client binds values) and returns how many there are. TiDB's
// parser leaves the order unset, and the AST walk order is not always the
// text order (LIMIT ?, ? stores the offset second), so markers are sorted by
// their offset in the text.
func numberParams(stmt ast.StmtNode, sql string) int {
	if strings.IndexByte(sql, '?') < 0 {
		return 0 // no marker can exist: skip the walk
	}
	c := paramCollector{}
	stmt.Accept(&c)
	slices.SortFunc(c.params, func(a, b *driver.ParamMarkerExpr) int { return a.Offset - b.Offset })
	for i, p := range c.params {
		p.SetOrder(i)
	}
	return len(c.params)
}

type paramCollector struct{ params []*driver.ParamMarkerExpr }

func (c *paramCollector) Enter(n ast.Node) (ast.Node, bool) {
	if p, ok := n.(*driver.ParamMarkerExpr); ok {
		c.params = append(c.params, p)
	}
	return n, false
}

func (*paramCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// fingerprintMySQL uses TiDB's statement digester, which tokenises the SQL
// like the parser does, replaces literals (and IN lists of literals) by '?',
// lower-cases keywords and collapses whitespace and comments.
func fingerprintMySQL(sql string) string {
	// "ON" is the digester's redaction mode that replaces literals with '?'.
	return tidb.Normalize(sql, "ON")
}
