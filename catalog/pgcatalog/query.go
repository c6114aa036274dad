package pgcatalog

import (
	"bytes"
	"context"
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/rewrite"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// registry lets the driver's functions find the catalog a query runs
// against: rendered SQL passes the catalog's id.
var (
	registry sync.Map // int64 → *Catalog
	lastID   atomic.Int64
)

func registered(v driver.Value) (*Catalog, error) {
	c, ok := registry.Load(integer(v))
	if !ok {
		return nil, fmt.Errorf("catalog %v is closed", v)
	}
	return c.(*Catalog), nil
}

func (c *Catalog) namespaces() map[string]uint32 {
	return map[string]uint32{PGCatalog: nsPGCatalog, c.schema: nsPublic, InformationSchema: nsInfoSchema}
}

// regclassIn is regclass input: an OID, or a name resolved along the
// search path (pg_catalog, then the served schema) unless qualified.
func (c *Catalog) regclassIn(v driver.Value) (driver.Value, error) {
	if n, ok := v.(int64); ok {
		return n, nil
	}
	s := strings.TrimSpace(text(v))
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return int64(n), nil
	}
	schema, name := splitQualified(s)
	for _, try := range []string{PGCatalog, c.schema} {
		if schema != "" && schema != try {
			continue
		}
		for oid, rel := range c.relOIDs {
			if rel[0] == try && rel[1] == name {
				return int64(oid), nil
			}
		}
	}
	return nil, fmt.Errorf("relation %q does not exist", s)
}

// regclassOut is regclass output: the name, qualified when its schema is
// not on the search path, or the number of an unknown OID.
func (c *Catalog) regclassOut(oid uint32) string {
	rel, ok := c.relOIDs[oid]
	switch {
	case !ok:
		return strconv.FormatUint(uint64(oid), 10)
	case rel[0] == PGCatalog || rel[0] == c.schema:
		return quoteIdentIfNeeded(rel[1])
	}
	return quoteIdentIfNeeded(rel[0]) + "." + quoteIdentIfNeeded(rel[1])
}

// query is one catalog query being rendered for a session.
type query struct {
	c    *Catalog
	sess Session
}

func (q *query) hooks(params []any) rewrite.CatalogHooks {
	return rewrite.CatalogHooks{Relation: q.relation, Func: q.function, Cast: q.cast, FuncTable: q.funcTable, Params: params}
}

// relation resolves a relation of FROM. Unqualified names follow
// PostgreSQL's search path: pg_catalog first, then the served schema,
// whose tables are private and never read by a catalog query.
func (q *query) relation(t *parser.TableName) (string, error) {
	schema, name := t.Schema, t.Name
	if schema == "" || schema == PGCatalog {
		if why, ok := refusedRelation(name); ok {
			return "", refused("%s %s; dpproxy does not serve it", name, why)
		}
		if r, ok := relationsBy[PGCatalog+"."+name]; ok {
			return q.relationSQL(r), nil
		}
		if schema == PGCatalog {
			return "", &UnsupportedError{What: "relation pg_catalog." + name}
		}
		schema = q.c.schema
	}
	switch schema {
	case InformationSchema:
		if r, ok := relationsBy[InformationSchema+"."+name]; ok {
			return q.relationSQL(r), nil
		}
		return "", &UnsupportedError{What: "relation information_schema." + name}
	case q.c.schema:
		if _, ok := q.c.tableOID[name]; ok {
			return "", refused("a catalog query cannot read table %s: its rows are private; ask for an aggregate instead", name)
		}
	}
	full := name
	if t.Schema != "" {
		full = t.Schema + "." + name
	}
	return "", &UndefinedTableError{Name: full}
}

func (q *query) relationSQL(r *relation) string {
	if !r.session {
		return quoteIdent(r.sqliteName())
	}
	return "(" + valuesSQL(r, q.sessionRows(r)) + ")"
}

// sessionRows are the rows of pg_roles, pg_user and pg_settings as the
// session sees them: the owner role and the connected user; the settings
// with the session's values.
func (q *query) sessionRows(r *relation) []row {
	switch r.Name {
	case "pg_roles":
		return []row{
			{"rolname": ownerName, "rolsuper": true, "rolinherit": true, "rolcreaterole": true, "rolcreatedb": true,
				"rolcanlogin": false, "rolconnlimit": -1, "rolpassword": "********", "oid": ownerOID},
			{"rolname": q.sess.User, "rolinherit": true, "rolcanlogin": true, "rolconnlimit": -1,
				"rolpassword": "********", "oid": sessionOID},
		}
	case "pg_user":
		return []row{
			{"usename": ownerName, "usesysid": ownerOID, "usesuper": true, "usecreatedb": true, "passwd": "********"},
			{"usename": q.sess.User, "usesysid": sessionOID, "passwd": "********"},
		}
	case "pg_settings":
		var rows []row
		for _, s := range settings {
			v, _ := q.c.Show(s.name, q.sess)
			rows = append(rows, row{"name": s.name, "setting": v, "category": s.category, "short_desc": s.desc,
				"context": s.context, "vartype": s.vartype, "source": "default", "boot_val": s.value(q.c, Session{}),
				"reset_val": s.value(q.c, Session{}), "pending_restart": false})
		}
		return rows
	}
	return nil
}

// valuesSQL is a SELECT of literal rows with the relation's columns. An
// empty list is a SELECT of no rows.
func valuesSQL(r *relation, rows []row) string {
	lits := func(rw row) string {
		parts := make([]string, len(r.Cols))
		for i, col := range r.Cols {
			v, ok := rw[col.Name]
			if !ok {
				v = zeroValue(col.Type)
			}
			parts[i] = sqlLiteral(storeValue(v)) + " AS " + quoteIdent(col.Name)
		}
		return "SELECT " + strings.Join(parts, ", ")
	}
	if len(rows) == 0 {
		return lits(row{}) + " WHERE 0"
	}
	out := make([]string, len(rows))
	for i, rw := range rows {
		out[i] = lits(rw)
	}
	return strings.Join(out, " UNION ALL ")
}

// sqlLiteral renders a Go value as a SQLite literal.
func sqlLiteral(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case bool:
		if x {
			return "1"
		}
		return "0"
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case uint32:
		return strconv.FormatUint(uint64(x), 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return quoteString(x)
	}
	return quoteString(fmt.Sprint(v))
}

func (q *query) function(f *parser.Func, args []string) (string, error) {
	spec, err := function(f)
	if err != nil {
		return "", err
	}
	return spec.render(q, f, args)
}

// cast renders x::type. Values keep their storage (OIDs as integers,
// arrays as JSON); casts to text produce PostgreSQL's output form.
func (q *query) cast(c *parser.Cast, x string) (string, error) {
	src := typeOf(c.X)
	id := strconv.FormatInt(q.c.id, 10)
	numeric := src.Category == 'N'
	switch c.Type {
	case "int":
		return "CAST(" + x + " AS INTEGER)", nil
	case "float", "decimal":
		return "CAST(" + x + " AS REAL)", nil
	case "string", "name":
		switch {
		case src.OID == OIDRegclass:
			return "pgcat_regclass_out(" + id + ", " + x + ")", nil
		case src.OID == OIDRegtype:
			return "pgcat_regtype_out(" + x + ")", nil
		case src.OID == OIDRegnsp:
			return "pgcat_nsp_out(" + id + ", " + x + ")", nil
		case src.OID == OIDBool:
			return "pgcat_bool_text(" + x + ")", nil
		case src.Category == 'A':
			return "pgcat_array_out(" + x + ")", nil
		}
		return "CAST(" + x + " AS TEXT)", nil
	case "bool":
		return "pgcat_bool(" + x + ")", nil
	case "oid", "regproc", "regrole", "xid":
		if numeric {
			return x, nil
		}
		return "CAST(" + x + " AS INTEGER)", nil
	case "regclass":
		if numeric {
			return x, nil
		}
		return "pgcat_regclass_in(" + id + ", " + x + ")", nil
	case "regtype":
		if numeric {
			return x, nil
		}
		return "pgcat_regtype_in(" + x + ")", nil
	case "regnamespace":
		if numeric {
			return x, nil
		}
		return "pgcat_nsp_in(" + id + ", " + x + ")", nil
	case "date", "datetime", "time", "json", "jsonb", "int2vector", "oidvector":
		return x, nil
	}
	if _, ok := lookupType(c.Type); ok && strings.HasSuffix(c.Type, "[]") && src.Category == 'A' {
		return x, nil
	}
	return "", &UnsupportedError{What: "cast to " + c.Type}
}

// funcTable renders a set-returning function in FROM over the emulated
// arrays (JSON) or as a counting series.
func (q *query) funcTable(f *parser.Func, args []string, col string) (string, error) {
	if _, err := function(f); err != nil && f.Name != "generate_series" {
		return "", err
	}
	if f.Schema != "" && f.Schema != PGCatalog && !(f.Schema == InformationSchema && f.Name == "_pg_expandarray") {
		return "", refused("function %s.%s is not available in catalog queries", f.Schema, f.Name)
	}
	c := quoteIdent(col)
	switch {
	case f.Name == "unnest" && len(args) == 1:
		return "SELECT value AS " + c + " FROM json_each(" + args[0] + ")", nil
	case f.Name == "_pg_expandarray" && len(args) == 1:
		return "SELECT value AS x, CAST(key AS INTEGER) + 1 AS n FROM json_each(" + args[0] + ")", nil
	case f.Name == "generate_series" && (len(args) == 2 || len(args) == 3):
		step := "1"
		if len(args) == 3 {
			step = args[2]
		}
		// A recursive series; the bound keeps a client's
		// generate_series(1, 1e12) from running for ever.
		return fmt.Sprintf("WITH RECURSIVE dp_series(v) AS (SELECT %[1]s WHERE (%[3]s) > 0 AND %[1]s <= %[2]s "+
			"UNION ALL SELECT v + (%[3]s) FROM dp_series WHERE v + (%[3]s) <= %[2]s LIMIT 100000) SELECT v AS %[4]s FROM dp_series",
			args[0], args[1], step, c), nil
	}
	return "", &UnsupportedError{What: "function " + f.Name + " in FROM"}
}

// Limits on one catalog query's work. The catalog holds metadata only, so
// they protect the proxy's CPU and memory, not privacy: a cross join of a
// few catalog relations has billions of rows.
const (
	// MaxQueryTime is how long a catalog query may run (less when the
	// caller's context ends sooner). SQLite is interrupted when it passes.
	MaxQueryTime = 2 * time.Second
	// MaxRows is how many rows a catalog answer may have.
	MaxRows = 100_000
	// MaxValueBytes is the longest string or blob a catalog query may make
	// (SQLite's SQLITE_LIMIT_LENGTH): nested replace() grows a string
	// exponentially. The longest real value, a string_agg of every column
	// name, is far shorter.
	MaxValueBytes = 1 << 20
	// MaxResultBytes bounds the strings and blobs of one answer together.
	MaxResultBytes = 64 << 20
)

// queryLimits are one Catalog's limits: the constants above, which tests
// may change.
type queryLimits struct {
	time        time.Duration
	rows, bytes int
	valueBytes  int
}

var defaultLimits = queryLimits{time: MaxQueryTime, rows: MaxRows, bytes: MaxResultBytes, valueBytes: MaxValueBytes}

// Query answers a catalog query. params are the values of $1, $2, ...
// Values are nil, bool, int64, float64 or string (arrays in PostgreSQL's
// text form, regclass and regtype as names), to be sent in text format
// according to each column's OID. It stops at the limits above with a
// *LimitError.
func (c *Catalog) Query(ctx context.Context, sel parser.Statement, sess Session, params ...any) ([]Column, [][]any, error) {
	if sel == nil {
		return nil, nil, &UnsupportedError{What: "an empty statement"}
	}
	q := &query{c: c, sess: sess}
	sqlText, err := rewrite.RenderCatalogSQL(sel, q.hooks(params))
	if err != nil {
		return nil, nil, err
	}
	names, out, err := c.run(ctx, sqlText)
	if err != nil {
		return nil, nil, err
	}
	cols := resultColumns(sel, names, out)
	for _, r := range out {
		for i, v := range r {
			r[i] = c.outputValue(cols[i].OID, v)
		}
	}
	return cols, out, nil
}

// run runs a rendered query within the limits and returns its column names
// and rows.
//
// database/sql would step through the rows in Rows.Next, where the driver
// no longer interrupts SQLite when the context ends (it does so only for the
// duration of the call that starts the statement), and a single step of a
// join with a rare match can run for minutes. So the query runs inside one
// Exec, which steps through every row and which the driver interrupts, and
// each row is handed to Go by pgcat_collect, which counts the rows and the
// bytes and fails the statement when either passes its limit.
func (c *Catalog) run(ctx context.Context, sqlText string) ([]string, [][]any, error) {
	lim := c.limits
	ctx, cancel := context.WithTimeout(ctx, lim.time)
	defer cancel()
	conn, err := c.sqlite.Conn(ctx)
	if err != nil {
		return nil, nil, runError(ctx, lim, err)
	}
	defer conn.Close()
	if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_LENGTH, lim.valueBytes); err != nil {
		return nil, nil, fmt.Errorf("pgcatalog: %w", err)
	}
	var names []string
	err = conn.Raw(func(dc any) error {
		ci, ok := dc.(interface {
			ColumnInfo(string) ([]sqlite.ColumnInfo, error)
		})
		if !ok {
			return fmt.Errorf("the SQLite driver cannot describe a query (%T)", dc)
		}
		info, err := ci.ColumnInfo(sqlText)
		for _, col := range info {
			names = append(names, col.Name)
		}
		return err
	})
	if err != nil {
		return nil, nil, runError(ctx, lim, err)
	}
	if len(names) == 0 {
		return names, nil, nil
	}
	col := newCollector(len(names), lim)
	defer col.release()
	if _, err := conn.ExecContext(ctx, collectSQL(sqlText, len(names), col.id)); err != nil {
		if col.err != nil {
			return nil, nil, col.err
		}
		return nil, nil, runError(ctx, lim, err)
	}
	return names, col.rows, nil
}

// runError turns a failure of the catalog's SQLite into the error for the
// client: the deadline's, or SQLite's message.
func runError(ctx context.Context, lim queryLimits, err error) error {
	if ctx.Err() != nil {
		return &LimitError{What: fmt.Sprintf("a catalog query ran for more than %v", lim.time), Timeout: true}
	}
	if strings.Contains(err.Error(), "string or blob too big") {
		return &LimitError{What: fmt.Sprintf("a catalog query made a value longer than %d bytes", lim.valueBytes)}
	}
	return fmt.Errorf("pgcatalog: %w", err)
}

// collectChunk is how many columns one pgcat_collect call takes: SQLite
// bounds a function's arguments (SQLITE_MAX_FUNCTION_ARG, 127 in older
// builds).
const collectChunk = 100

// collectSQL wraps a query so that every row it returns goes to the
// collector id: the query's columns are renamed by position (its own names
// may repeat), and each chunk of them is passed, in order, to pgcat_collect.
func collectSQL(sqlText string, ncols int, id int64) string {
	var cols, calls strings.Builder
	for i := range ncols {
		if i > 0 {
			cols.WriteString(", ")
		}
		fmt.Fprintf(&cols, "dp_c%d", i)
	}
	for start := 0; start < ncols; start += collectChunk {
		if start > 0 {
			calls.WriteString(", ")
		}
		fmt.Fprintf(&calls, "pgcat_collect(%d, %d", id, start)
		for i := start; i < min(start+collectChunk, ncols); i++ {
			fmt.Fprintf(&calls, ", dp_c%d", i)
		}
		calls.WriteString(")")
	}
	return fmt.Sprintf("WITH dp_q(%s) AS (%s) SELECT %s FROM dp_q", cols.String(), sqlText, calls.String())
}

// collectors are the rows being collected, by id, for pgcat_collect.
var (
	collectors  sync.Map // int64 → *collector
	lastCollect atomic.Int64
)

// collector receives the rows of one running query. Only the goroutine
// running its statement touches it until the statement ends.
type collector struct {
	id    int64
	ncols int
	lim   queryLimits
	rows  [][]any
	bytes int
	err   error // the limit that stopped the statement
}

func newCollector(ncols int, lim queryLimits) *collector {
	col := &collector{id: lastCollect.Add(1), ncols: ncols, lim: lim}
	collectors.Store(col.id, col)
	return col
}

func (col *collector) release() { collectors.Delete(col.id) }

// add takes the columns from start on of the current row; start 0 begins
// a new row.
func (col *collector) add(start int, vals []driver.Value) error {
	if start == 0 {
		if len(col.rows) == col.lim.rows {
			col.err = &LimitError{What: fmt.Sprintf("a catalog query returned more than %d rows", col.lim.rows)}
			return col.err
		}
		col.rows = append(col.rows, make([]any, 0, col.ncols))
	}
	r := &col.rows[len(col.rows)-1]
	for _, v := range vals {
		switch x := v.(type) {
		case string:
			col.bytes += len(x)
		case []byte:
			col.bytes += len(x)
			v = bytes.Clone(x) // SQLite's memory
		}
		*r = append(*r, v)
	}
	if col.bytes > col.lim.bytes {
		col.err = &LimitError{What: fmt.Sprintf("a catalog query returned more than %d bytes", col.lim.bytes)}
		return col.err
	}
	return nil
}

// collect is pgcat_collect(id, start, values...).
func collect(args []driver.Value) (driver.Value, error) {
	if len(args) < 2 {
		return nil, fmt.Errorf("pgcat_collect: %d arguments", len(args))
	}
	v, ok := collectors.Load(integer(args[0]))
	if !ok {
		return nil, fmt.Errorf("pgcat_collect: no collector %v", args[0])
	}
	return nil, v.(*collector).add(int(integer(args[1])), args[2:])
}
