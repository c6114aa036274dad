package catalog

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dpproxy/dpproxy/eval"
	"github.com/dpproxy/dpproxy/parser"
)

// listing is the answer to a SHOW statement before LIKE and WHERE.
type listing struct {
	cols []string
	rows [][]any
	// LIKE matches the first column; likeCI says it ignores case (MariaDB
	// compares names of databases and tables case-sensitively on Linux,
	// lower_case_table_names=0, and everything else case-insensitively).
	likeCI bool
	// likeHeader appends " (pattern)" to the first column's name when LIKE
	// is given, as MariaDB prints "Tables_in_demo (o%)".
	likeHeader bool
}

// Show answers a SHOW statement (DESCRIBE is ShowColumns) with the columns
// MariaDB prints. Nothing here reads the backend.
func (c *Catalog) Show(s *parser.Show, sess SessionInfo) (cols []string, rows [][]any, err error) {
	var l listing
	switch s.Kind {
	case parser.ShowDatabases:
		l = listing{cols: []string{"Database"}, likeHeader: true,
			rows: [][]any{{InformationSchema}, {c.db}}}
	case parser.ShowTables:
		l, err = c.showTables(s, sess)
	case parser.ShowColumns:
		l, err = c.showColumns(s, sess)
	case parser.ShowVariables:
		l = listing{cols: []string{"Variable_name", "Value"}, likeCI: true}
		for _, v := range c.variables(sess, s.Global) {
			l.rows = append(l.rows, []any{v[0], v[1]})
		}
	case parser.ShowVariable:
		l, err = c.showVariable(s, sess)
	case parser.ShowStatus:
		l = showStatus(sess)
	case parser.ShowWarnings:
		l = showWarnings(sess)
	case parser.ShowErrors:
		// The session passes only warnings: there are no errors to list.
		l = listing{cols: []string{"Level", "Code", "Message"}}
	case parser.ShowCollation:
		l = listing{cols: []string{"Collation", "Charset", "Id", "Default", "Compiled", "Sortlen"},
			rows: c.collationRows(), likeCI: true}
	case parser.ShowCharset:
		l = listing{cols: []string{"Charset", "Description", "Default collation", "Maxlen"}, likeCI: true}
		for _, cs := range charsets {
			l.rows = append(l.rows, []any{cs.name, cs.description, cs.defaultCollation, cs.maxLen})
		}
	case parser.ShowCreateTable:
		l, err = c.showCreateTable(s, sess)
	case parser.ShowTableStatus:
		l, err = c.showTableStatus(s, sess)
	case parser.ShowIndex:
		l, err = c.showIndex(s, sess)
	case parser.ShowEngines:
		l = listing{cols: []string{"Engine", "Support", "Comment", "Transactions", "XA", "Savepoints"},
			rows: c.engineRows()}
	case parser.ShowGrants:
		l = c.showGrants(sess)
	case parser.ShowProcessList:
		return nil, nil, &RefusedError{Reason: "SHOW PROCESSLIST would reveal other sessions' statements"}
	default:
		return nil, nil, fmt.Errorf("catalog: SHOW statement of kind %d is not supported", s.Kind)
	}
	if err != nil {
		return nil, nil, err
	}
	return l.filter(s, c, sess)
}

// filter applies SHOW ... LIKE 'pattern' to the first column, or SHOW ...
// WHERE to the listing's columns (evaluated as SELECT * FROM listing WHERE).
func (l listing) filter(s *parser.Show, c *Catalog, sess SessionInfo) ([]string, [][]any, error) {
	switch {
	case s.Like != "":
		var kept [][]any
		for _, r := range l.rows {
			// MariaDB's LIKE escape character is the backslash.
			if eval.Like(eval.ToString(r[0]), s.Like, '\\', l.likeCI) {
				kept = append(kept, r)
			}
		}
		if l.likeHeader {
			l.cols[0] = fmt.Sprintf("%s (%s)", l.cols[0], s.Like)
		}
		return l.cols, kept, nil
	case s.Where != nil:
		const name = "show"
		sel := &parser.Select{Items: []parser.SelectItem{{Star: true}}, From: &parser.TableName{Name: name}, Where: s.Where}
		_, rows, err := eval.Select(sel, &eval.Table{Name: name, Columns: l.cols, Rows: l.rows}, sessionEnv{c, sess})
		if err != nil {
			return nil, nil, fmt.Errorf("catalog: SHOW ... WHERE: %w", err)
		}
		return l.cols, rows, nil
	}
	return l.cols, l.rows, nil
}

func (c *Catalog) showTables(s *parser.Show, sess SessionInfo) (listing, error) {
	db, infoSchema, err := c.schema(s.Schema, sess.Database)
	if err != nil {
		return listing{}, err
	}
	l := listing{cols: []string{"Tables_in_" + db}, likeHeader: true}
	if s.Full {
		l.cols = append(l.cols, "Table_type")
	}
	add := func(name, kind string) {
		r := []any{name}
		if s.Full {
			r = append(r, kind)
		}
		l.rows = append(l.rows, r)
	}
	if infoSchema {
		for _, n := range virtualTableNames() {
			add(n, "SYSTEM VIEW")
		}
		return l, nil
	}
	for _, t := range c.tables {
		add(t.Name, "BASE TABLE")
	}
	return l, nil
}

func (c *Catalog) showColumns(s *parser.Show, sess SessionInfo) (listing, error) {
	db, infoSchema, err := c.schema(s.Schema, sess.Database)
	if err != nil {
		return listing{}, err
	}
	t, err := c.table(db, infoSchema, s.Table)
	if err != nil {
		return listing{}, err
	}
	l := listing{cols: []string{"Field", "Type", "Null", "Key", "Default", "Extra"}, likeCI: true}
	if s.Full {
		l.cols = []string{"Field", "Type", "Collation", "Null", "Key", "Default", "Extra", "Privileges", "Comment"}
	}
	for _, col := range t.Columns {
		typ := mysqlType(col.Type)
		def := shownDefault(col.Default)
		if !s.Full {
			l.rows = append(l.rows, []any{col.Name, typ.ColumnType, yesNo(col.Nullable), col.Key, def, ""})
			continue
		}
		var coll any
		if typ.Text {
			coll = defaultCollation
		}
		l.rows = append(l.rows, []any{col.Name, typ.ColumnType, coll, yesNo(col.Nullable), col.Key, def, "", "select", ""})
	}
	return l, nil
}

// shownDefault is a column default as SHOW COLUMNS prints it: string
// literals without their quotes, NULL as NULL.
func shownDefault(d *string) any {
	if d == nil || strings.EqualFold(*d, "NULL") {
		return nil
	}
	s := *d
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
	}
	return s
}

func (c *Catalog) showVariable(s *parser.Show, sess SessionInfo) (listing, error) {
	v, ok := c.Variable(s.Name, sess)
	if !ok {
		return listing{}, &UnknownVariableError{Name: s.Name}
	}
	return listing{cols: []string{strings.ToLower(s.Name)},
		rows: [][]any{{shown(systemVars[strings.ToLower(s.Name)].kind, v)}}}, nil
}

// started approximates the server's start for Uptime: the moment the proxy
// process loaded this package.
var started = time.Now()

// showStatus lists the few status variables that describe the proxy without
// revealing anything about data or other sessions' statements.
func showStatus(sess SessionInfo) listing {
	uptime := strconv.FormatInt(int64(time.Since(started)/time.Second), 10)
	threads := max(sess.Connections, 1)
	return listing{cols: []string{"Variable_name", "Value"}, likeCI: true, rows: [][]any{
		{"Threads_connected", strconv.Itoa(threads)},
		{"Uptime", uptime},
		{"Uptime_since_flush_status", uptime},
	}}
}

// warningCode is what SHOW WARNINGS reports for dpproxy's own warnings, which
// have no MySQL error number of their own: ER_UNKNOWN_ERROR (1105), the code
// MySQL uses for messages outside its catalogue of errors.
const warningCode = 1105

func showWarnings(sess SessionInfo) listing {
	l := listing{cols: []string{"Level", "Code", "Message"}}
	for _, w := range sess.Warnings {
		l.rows = append(l.rows, []any{"Warning", int64(warningCode), w})
	}
	return l
}

func (c *Catalog) showCreateTable(s *parser.Show, sess SessionInfo) (listing, error) {
	db, infoSchema, err := c.schema(s.Schema, sess.Database)
	if err != nil {
		return listing{}, err
	}
	t, err := c.table(db, infoSchema, s.Table)
	if err != nil {
		return listing{}, err
	}
	return listing{cols: []string{"Table", "Create Table"}, rows: [][]any{{t.Name, createTable(t, infoSchema)}}}, nil
}

// createTable writes the CREATE TABLE statement of t as MariaDB prints it,
// built from the column metadata. Only the primary and unique keys are
// known (from COLUMN_KEY); other indexes are left out.
func createTable(t TableInfo, infoSchema bool) string {
	var b strings.Builder
	b.WriteString("CREATE ")
	if infoSchema {
		b.WriteString("TEMPORARY ")
	}
	fmt.Fprintf(&b, "TABLE %s (\n", quoteIdent(t.Name))
	var lines, primary []string
	for _, col := range t.Columns {
		line := "  " + quoteIdent(col.Name) + " " + mysqlType(col.Type).ColumnType
		if !col.Nullable {
			line += " NOT NULL"
		}
		switch {
		case col.Default != nil && !(strings.EqualFold(*col.Default, "NULL") && !col.Nullable):
			line += " DEFAULT " + *col.Default
		case col.Default == nil && col.Nullable:
			line += " DEFAULT NULL"
		}
		lines = append(lines, line)
		if col.Key == "PRI" {
			primary = append(primary, quoteIdent(col.Name))
		}
	}
	if len(primary) > 0 {
		lines = append(lines, "  PRIMARY KEY ("+strings.Join(primary, ",")+")")
	}
	for _, col := range t.Columns {
		if col.Key == "UNI" {
			lines = append(lines, fmt.Sprintf("  UNIQUE KEY %s (%s)", quoteIdent(col.Name), quoteIdent(col.Name)))
		}
	}
	b.WriteString(strings.Join(lines, ",\n"))
	if infoSchema {
		fmt.Fprintf(&b, "\n) ENGINE=MEMORY DEFAULT CHARSET=%s COLLATE=%s", systemCharset, systemCollation)
	} else {
		fmt.Fprintf(&b, "\n) ENGINE=InnoDB DEFAULT CHARSET=%s COLLATE=%s COMMENT=%s",
			defaultCharset, defaultCollation, quoteString(tableComment(t)))
	}
	return b.String()
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func quoteString(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", "''") + "'"
}

// tableStatusColumns are MariaDB 10.11's SHOW TABLE STATUS columns.
var tableStatusColumns = []string{"Name", "Engine", "Version", "Row_format", "Rows", "Avg_row_length",
	"Data_length", "Max_data_length", "Index_length", "Data_free", "Auto_increment", "Create_time",
	"Update_time", "Check_time", "Collation", "Checksum", "Create_options", "Comment",
	"Max_index_length", "Temporary"}

// showTableStatus is SHOW TABLE STATUS with every statistic NULL: row
// counts, lengths and AUTO_INCREMENT would reveal the size of private
// tables. It is the TABLES view of the schema under MariaDB's column names.
func (c *Catalog) showTableStatus(s *parser.Show, sess SessionInfo) (listing, error) {
	db, _, err := c.schema(s.Schema, sess.Database)
	if err != nil {
		return listing{}, err
	}
	l := listing{cols: tableStatusColumns}
	for _, r := range c.tablesRows() {
		if r[1] == db {
			// TABLES without TABLE_CATALOG, TABLE_SCHEMA and TABLE_TYPE.
			l.rows = append(l.rows, append([]any{r[2]}, r[4:]...))
		}
	}
	return l, nil
}

func (c *Catalog) showIndex(s *parser.Show, sess SessionInfo) (listing, error) {
	db, infoSchema, err := c.schema(s.Schema, sess.Database)
	if err != nil {
		return listing{}, err
	}
	if _, err := c.table(db, infoSchema, s.Table); err != nil {
		return listing{}, err
	}
	// Index definitions come with CARDINALITY, a statistic of the data:
	// dpproxy lists none.
	return listing{cols: []string{"Table", "Non_unique", "Key_name", "Seq_in_index", "Column_name",
		"Collation", "Cardinality", "Sub_part", "Packed", "Null", "Index_type", "Comment",
		"Index_comment", "Ignored"}}, nil
}

// showGrants reports what dpproxy lets every user do: read the database
// (through differential privacy where the policy says so).
func (c *Catalog) showGrants(sess SessionInfo) listing {
	return listing{cols: []string{"Grants for " + sess.User + "@%"}, rows: [][]any{
		{fmt.Sprintf("GRANT SELECT ON %s.* TO %s@`%%`", quoteIdent(c.db), quoteIdent(sess.User))},
	}}
}

// sessionEnv resolves what a SHOW ... WHERE condition refers to beyond the
// listing's columns: system variables and DATABASE().
type sessionEnv struct {
	c    *Catalog
	sess SessionInfo
}

func (e sessionEnv) Column(ref *parser.ColumnRef) (any, error) {
	return nil, fmt.Errorf("Unknown column '%s' in 'where clause'", ref.Name)
}

func (e sessionEnv) Variable(v *parser.Variable) (any, error) {
	if !v.System {
		return nil, fmt.Errorf("user variable @%s cannot be read in SHOW ... WHERE", v.Name)
	}
	val, ok := e.c.Variable(v.Name, e.sess)
	if !ok {
		return nil, &UnknownVariableError{Name: v.Name}
	}
	return val, nil
}

func (e sessionEnv) Param(i int) (any, error) {
	return nil, fmt.Errorf("SHOW ... WHERE has no parameter %d", i+1)
}

func (e sessionEnv) Call(f *parser.Func) (any, bool, error) {
	switch f.Name {
	case "database", "schema":
		if e.sess.Database == "" {
			return nil, true, nil
		}
		return e.sess.Database, true, nil
	}
	return nil, false, nil
}
