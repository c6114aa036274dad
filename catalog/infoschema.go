package catalog

import (
	"slices"
	"strings"

	"github.com/dpproxy/dpproxy/eval"
)

// virtualTable is one information_schema table: its columns as MariaDB 10.11
// defines them and the rows the catalog can give without reading any data.
type virtualTable struct {
	name    string
	columns []ColumnInfo
	rows    func(c *Catalog) [][]any // nil: always empty
}

// info describes the virtual table like a user table (for DESCRIBE, SHOW
// CREATE TABLE and information_schema.COLUMNS).
func (vt *virtualTable) info() TableInfo {
	return TableInfo{Name: vt.name, Public: true, Columns: vt.columns}
}

// defineTable declares a virtual table from "NAME type" column specs; a
// trailing " NULL" marks a nullable column.
func defineTable(name string, rows func(c *Catalog) [][]any, specs ...string) *virtualTable {
	vt := &virtualTable{name: name, rows: rows}
	for _, s := range specs {
		s, nullable := strings.CutSuffix(s, " NULL")
		col, typ, _ := strings.Cut(s, " ")
		vt.columns = append(vt.columns, ColumnInfo{Name: col, Type: typ, Nullable: nullable})
	}
	return vt
}

// virtualTables are the information_schema tables dpproxy serves, by upper
// case name. The statistics columns (TABLE_ROWS, DATA_LENGTH, CARDINALITY,
// ...) are kept so that clients find them, and are always NULL.
var virtualTables = map[string]*virtualTable{}

func init() {
	for _, vt := range []*virtualTable{
		defineTable("SCHEMATA", (*Catalog).schemataRows,
			"CATALOG_NAME varchar(512)", "SCHEMA_NAME varchar(64)", "DEFAULT_CHARACTER_SET_NAME varchar(32)",
			"DEFAULT_COLLATION_NAME varchar(64)", "SQL_PATH varchar(512) NULL", "SCHEMA_COMMENT varchar(1024)"),
		defineTable("TABLES", (*Catalog).tablesRows,
			"TABLE_CATALOG varchar(512)", "TABLE_SCHEMA varchar(64)", "TABLE_NAME varchar(64)", "TABLE_TYPE varchar(64)",
			"ENGINE varchar(64) NULL", "VERSION bigint(21) unsigned NULL", "ROW_FORMAT varchar(10) NULL",
			"TABLE_ROWS bigint(21) unsigned NULL", "AVG_ROW_LENGTH bigint(21) unsigned NULL",
			"DATA_LENGTH bigint(21) unsigned NULL", "MAX_DATA_LENGTH bigint(21) unsigned NULL",
			"INDEX_LENGTH bigint(21) unsigned NULL", "DATA_FREE bigint(21) unsigned NULL",
			"AUTO_INCREMENT bigint(21) unsigned NULL", "CREATE_TIME datetime NULL", "UPDATE_TIME datetime NULL",
			"CHECK_TIME datetime NULL", "TABLE_COLLATION varchar(64) NULL", "CHECKSUM bigint(21) unsigned NULL",
			"CREATE_OPTIONS varchar(2048) NULL", "TABLE_COMMENT varchar(2048)",
			"MAX_INDEX_LENGTH bigint(21) unsigned NULL", "TEMPORARY varchar(1) NULL"),
		defineTable("COLUMNS", (*Catalog).columnsRows,
			"TABLE_CATALOG varchar(512)", "TABLE_SCHEMA varchar(64)", "TABLE_NAME varchar(64)", "COLUMN_NAME varchar(64)",
			"ORDINAL_POSITION bigint(21) unsigned", "COLUMN_DEFAULT longtext NULL", "IS_NULLABLE varchar(3)",
			"DATA_TYPE varchar(64)", "CHARACTER_MAXIMUM_LENGTH bigint(21) unsigned NULL",
			"CHARACTER_OCTET_LENGTH bigint(21) unsigned NULL", "NUMERIC_PRECISION bigint(21) unsigned NULL",
			"NUMERIC_SCALE bigint(21) unsigned NULL", "DATETIME_PRECISION bigint(21) unsigned NULL",
			"CHARACTER_SET_NAME varchar(32) NULL", "COLLATION_NAME varchar(64) NULL", "COLUMN_TYPE longtext",
			"COLUMN_KEY varchar(3)", "EXTRA varchar(80)", "PRIVILEGES varchar(80)", "COLUMN_COMMENT varchar(1024)",
			"IS_GENERATED varchar(6)", "GENERATION_EXPRESSION longtext NULL"),
		defineTable("STATISTICS", nil,
			"TABLE_CATALOG varchar(512)", "TABLE_SCHEMA varchar(64)", "TABLE_NAME varchar(64)",
			"NON_UNIQUE bigint(1)", "INDEX_SCHEMA varchar(64)", "INDEX_NAME varchar(64)", "SEQ_IN_INDEX bigint(2)",
			"COLUMN_NAME varchar(64)", "COLLATION varchar(1) NULL", "CARDINALITY bigint(21) NULL",
			"SUB_PART bigint(3) NULL", "PACKED varchar(10) NULL", "NULLABLE varchar(3)", "INDEX_TYPE varchar(16)",
			"COMMENT varchar(16) NULL", "INDEX_COMMENT varchar(1024)", "IGNORED varchar(3)"),
		defineTable("KEY_COLUMN_USAGE", nil,
			"CONSTRAINT_CATALOG varchar(512)", "CONSTRAINT_SCHEMA varchar(64)", "CONSTRAINT_NAME varchar(64)",
			"TABLE_CATALOG varchar(512)", "TABLE_SCHEMA varchar(64)", "TABLE_NAME varchar(64)",
			"COLUMN_NAME varchar(64)", "ORDINAL_POSITION bigint(10)", "POSITION_IN_UNIQUE_CONSTRAINT bigint(10) NULL",
			"REFERENCED_TABLE_SCHEMA varchar(64) NULL", "REFERENCED_TABLE_NAME varchar(64) NULL",
			"REFERENCED_COLUMN_NAME varchar(64) NULL"),
		defineTable("VIEWS", nil,
			"TABLE_CATALOG varchar(512)", "TABLE_SCHEMA varchar(64)", "TABLE_NAME varchar(64)",
			"VIEW_DEFINITION longtext", "CHECK_OPTION varchar(8)", "IS_UPDATABLE varchar(3)", "DEFINER varchar(384)",
			"SECURITY_TYPE varchar(7)", "CHARACTER_SET_CLIENT varchar(32)", "COLLATION_CONNECTION varchar(64)",
			"ALGORITHM varchar(10)"),
		defineTable("ROUTINES", nil,
			"SPECIFIC_NAME varchar(64)", "ROUTINE_CATALOG varchar(512)", "ROUTINE_SCHEMA varchar(64)",
			"ROUTINE_NAME varchar(64)", "ROUTINE_TYPE varchar(13)", "DATA_TYPE varchar(64)",
			"CHARACTER_MAXIMUM_LENGTH int(21) NULL", "CHARACTER_OCTET_LENGTH int(21) NULL",
			"NUMERIC_PRECISION int(21) NULL", "NUMERIC_SCALE int(21) NULL", "DATETIME_PRECISION bigint(21) unsigned NULL",
			"CHARACTER_SET_NAME varchar(64) NULL", "COLLATION_NAME varchar(64) NULL", "DTD_IDENTIFIER longtext NULL",
			"ROUTINE_BODY varchar(8)", "ROUTINE_DEFINITION longtext NULL", "EXTERNAL_NAME varchar(64) NULL",
			"EXTERNAL_LANGUAGE varchar(64) NULL", "PARAMETER_STYLE varchar(8)", "IS_DETERMINISTIC varchar(3)",
			"SQL_DATA_ACCESS varchar(64)", "SQL_PATH varchar(64) NULL", "SECURITY_TYPE varchar(7)",
			"CREATED datetime", "LAST_ALTERED datetime", "SQL_MODE varchar(8192)", "ROUTINE_COMMENT longtext",
			"DEFINER varchar(384)", "CHARACTER_SET_CLIENT varchar(32)", "COLLATION_CONNECTION varchar(64)",
			"DATABASE_COLLATION varchar(64)"),
		defineTable("PARAMETERS", nil,
			"SPECIFIC_CATALOG varchar(512)", "SPECIFIC_SCHEMA varchar(64)", "SPECIFIC_NAME varchar(64)",
			"ORDINAL_POSITION int(21)", "PARAMETER_MODE varchar(5) NULL", "PARAMETER_NAME varchar(64) NULL",
			"DATA_TYPE varchar(64)", "CHARACTER_MAXIMUM_LENGTH int(21) NULL", "CHARACTER_OCTET_LENGTH int(21) NULL",
			"NUMERIC_PRECISION int(21) NULL", "NUMERIC_SCALE int(21) NULL", "DATETIME_PRECISION bigint(21) unsigned NULL",
			"CHARACTER_SET_NAME varchar(64) NULL", "COLLATION_NAME varchar(64) NULL", "DTD_IDENTIFIER longtext",
			"ROUTINE_TYPE varchar(9)"),
		defineTable("CHARACTER_SETS", (*Catalog).charsetRows,
			"CHARACTER_SET_NAME varchar(32)", "DEFAULT_COLLATE_NAME varchar(64)", "DESCRIPTION varchar(60)",
			"MAXLEN bigint(3)"),
		defineTable("COLLATIONS", (*Catalog).collationRows,
			"COLLATION_NAME varchar(64)", "CHARACTER_SET_NAME varchar(32) NULL", "ID bigint(11) NULL",
			"IS_DEFAULT varchar(3) NULL", "IS_COMPILED varchar(3)", "SORTLEN bigint(3)"),
		defineTable("ENGINES", (*Catalog).engineRows,
			"ENGINE varchar(64)", "SUPPORT varchar(8)", "COMMENT varchar(160)", "TRANSACTIONS varchar(3) NULL",
			"XA varchar(3) NULL", "SAVEPOINTS varchar(3) NULL"),
		defineTable("TABLE_CONSTRAINTS", nil,
			"CONSTRAINT_CATALOG varchar(512)", "CONSTRAINT_SCHEMA varchar(64)", "CONSTRAINT_NAME varchar(64)",
			"TABLE_SCHEMA varchar(64)", "TABLE_NAME varchar(64)", "CONSTRAINT_TYPE varchar(64)"),
		defineTable("REFERENTIAL_CONSTRAINTS", nil,
			"CONSTRAINT_CATALOG varchar(512)", "CONSTRAINT_SCHEMA varchar(64)", "CONSTRAINT_NAME varchar(64)",
			"UNIQUE_CONSTRAINT_CATALOG varchar(512)", "UNIQUE_CONSTRAINT_SCHEMA varchar(64)",
			"UNIQUE_CONSTRAINT_NAME varchar(64) NULL", "MATCH_OPTION varchar(64)", "UPDATE_RULE varchar(64)",
			"DELETE_RULE varchar(64)", "TABLE_NAME varchar(64)", "REFERENCED_TABLE_NAME varchar(64)"),
	} {
		virtualTables[vt.name] = vt
	}
}

// virtualTableNames lists the information_schema tables in name order.
func virtualTableNames() []string {
	names := make([]string, 0, len(virtualTables))
	for n := range virtualTables {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Table returns the information_schema table called name (case-insensitive),
// filled from the catalog. Tables dpproxy does not serve are absent.
func (c *Catalog) Table(name string) (*eval.Table, bool) {
	vt, ok := virtualTables[strings.ToUpper(name)]
	if !ok {
		return nil, false
	}
	t := &eval.Table{Name: vt.name, Columns: make([]string, len(vt.columns))}
	for i, col := range vt.columns {
		t.Columns[i] = col.Name
	}
	if vt.rows != nil {
		t.Rows = vt.rows(c)
	}
	return t, true
}

// catalogName is what MariaDB reports in every *_CATALOG column.
const catalogName = "def"

// Character sets and collations: the database and every connection use
// utf8mb4_general_ci, so those are what dpproxy reports.
const (
	defaultCharset   = "utf8mb4"
	defaultCollation = "utf8mb4_general_ci"
	// information_schema itself is utf8mb3 in MariaDB.
	systemCharset   = "utf8mb3"
	systemCollation = "utf8mb3_general_ci"
)

func (c *Catalog) schemataRows() [][]any {
	return [][]any{
		{catalogName, InformationSchema, systemCharset, systemCollation, nil, ""},
		{catalogName, c.db, defaultCharset, defaultCollation, nil, ""},
	}
}

// tableComment tells a client how dpproxy will answer queries on a table.
func tableComment(t TableInfo) string {
	if t.Public {
		return "public"
	}
	return "private: differentially private aggregates only"
}

func (c *Catalog) tablesRows() [][]any {
	var rows [][]any
	for _, name := range virtualTableNames() {
		// TABLE_ROWS ... CHECK_TIME, then CHECKSUM and MAX_INDEX_LENGTH, are NULL.
		rows = append(rows, []any{catalogName, InformationSchema, name, "SYSTEM VIEW", "MEMORY", int64(11), "Fixed",
			nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
			systemCollation, nil, "", "", nil, "Y"})
	}
	for _, t := range c.tables {
		rows = append(rows, []any{catalogName, c.db, t.Name, "BASE TABLE", "InnoDB", int64(10), "Dynamic",
			nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
			defaultCollation, nil, "", tableComment(t), nil, "N"})
	}
	return rows
}

func (c *Catalog) columnsRows() [][]any {
	var rows [][]any
	add := func(db string, t TableInfo) {
		for i, col := range t.Columns {
			typ := mysqlType(col.Type)
			var charset, collation any
			if typ.Text {
				charset, collation = defaultCharset, defaultCollation
			}
			rows = append(rows, []any{catalogName, db, t.Name, col.Name, int64(i + 1),
				columnDefault(col), yesNo(col.Nullable), typ.DataType, typ.CharMax, typ.OctetMax,
				typ.NumPrecision, typ.NumScale, typ.DatetimePrecision, charset, collation,
				typ.ColumnType, col.Key, "", "select", "", "NEVER", nil})
		}
	}
	for _, name := range virtualTableNames() {
		add(InformationSchema, virtualTables[name].info())
	}
	for _, t := range c.tables {
		add(c.db, t)
	}
	return rows
}

// columnDefault is COLUMN_DEFAULT as MariaDB (10.2.7 and later) reports it:
// the default as SQL text, and the text NULL for a nullable column without
// one.
func columnDefault(col ColumnInfo) any {
	switch {
	case col.Default != nil:
		return *col.Default
	case col.Nullable:
		return "NULL"
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}

// charset is a character set dpproxy reports, with MariaDB's description.
type charset struct {
	name, defaultCollation, description string
	maxLen                              int64
}

var charsets = []charset{
	{"binary", "binary", "Binary pseudo charset", 1},
	{"latin1", "latin1_swedish_ci", "cp1252 West European", 1},
	{"utf8mb3", "utf8mb3_general_ci", "UTF-8 Unicode", 3},
	{"utf8mb4", "utf8mb4_general_ci", "UTF-8 Unicode", 4},
}

// collation is a collation dpproxy reports, with MariaDB's id (the number a
// client receives in the handshake and in column definitions) and sort
// length.
type collation struct {
	name, charset string
	id            int64
	isDefault     bool
	sortLen       int64
}

var collations = []collation{
	{"binary", "binary", 63, true, 1},
	{"latin1_bin", "latin1", 47, false, 1},
	{"latin1_swedish_ci", "latin1", 8, true, 1},
	{"utf8mb3_bin", "utf8mb3", 83, false, 1},
	{"utf8mb3_general_ci", "utf8mb3", 33, true, 1},
	{"utf8mb4_bin", "utf8mb4", 46, false, 1},
	{"utf8mb4_general_ci", "utf8mb4", 45, true, 1},
	{"utf8mb4_unicode_ci", "utf8mb4", 224, false, 8},
}

func (c *Catalog) charsetRows() [][]any {
	rows := make([][]any, len(charsets))
	for i, cs := range charsets {
		rows[i] = []any{cs.name, cs.defaultCollation, cs.description, cs.maxLen}
	}
	return rows
}

func (c *Catalog) collationRows() [][]any {
	rows := make([][]any, len(collations))
	for i, co := range collations {
		def := ""
		if co.isDefault {
			def = "Yes"
		}
		rows[i] = []any{co.name, co.charset, co.id, def, "Yes", co.sortLen}
	}
	return rows
}

// engine is the one storage engine dpproxy reports: tables live in the
// backend, and clients only need to see a transactional default.
var engine = []any{"InnoDB", "DEFAULT",
	"Supports transactions, row-level locking, foreign keys and encryption for tables", "YES", "YES", "YES"}

func (c *Catalog) engineRows() [][]any { return [][]any{slices.Clone(engine)} }
