package catalog

import (
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/eval"
	"github.com/dpproxy/dpproxy/parser"
)

func TestVirtualTableColumnsAreWellFormed(t *testing.T) {
	for name, vt := range virtualTables {
		seen := map[string]bool{}
		for _, c := range vt.columns {
			if seen[c.Name] || c.Name != strings.ToUpper(c.Name) || c.Type == "" {
				t.Errorf("%s: bad or duplicate column %q (type %q)", name, c.Name, c.Type)
			}
			seen[c.Name] = true
		}
	}
}

func TestTableServesEveryInformationSchemaTable(t *testing.T) {
	c := demo()
	for _, name := range []string{"SCHEMATA", "TABLES", "COLUMNS", "STATISTICS", "KEY_COLUMN_USAGE",
		"VIEWS", "ROUTINES", "PARAMETERS", "CHARACTER_SETS", "COLLATIONS", "ENGINES",
		"TABLE_CONSTRAINTS", "REFERENTIAL_CONSTRAINTS"} {
		tab, ok := c.Table(strings.ToLower(name))
		if !ok {
			t.Errorf("Table(%q) missing", name)
			continue
		}
		if tab.Name != name {
			t.Errorf("Table(%q).Name = %q", name, tab.Name)
		}
		for _, r := range tab.Rows {
			if len(r) != len(tab.Columns) {
				t.Errorf("%s: row of %d values for %d columns: %v", name, len(r), len(tab.Columns), r)
			}
		}
	}
	if _, ok := c.Table("patients"); ok {
		t.Error("Table serves a user table")
	}
	if _, ok := c.Table("INNODB_TABLESTATS"); ok {
		t.Error("Table serves a statistics table dpproxy does not define")
	}
}

func TestEmptyTablesAreEmpty(t *testing.T) {
	c := demo()
	for _, name := range []string{"STATISTICS", "KEY_COLUMN_USAGE", "VIEWS", "ROUTINES", "PARAMETERS",
		"TABLE_CONSTRAINTS", "REFERENTIAL_CONSTRAINTS"} {
		tab, _ := c.Table(name)
		if len(tab.Rows) != 0 {
			t.Errorf("%s has %d rows, want none", name, len(tab.Rows))
		}
	}
	stats, _ := c.Table("STATISTICS")
	if !slices.Contains(stats.Columns, "CARDINALITY") {
		t.Error("STATISTICS lacks CARDINALITY; clients look for it")
	}
}

func TestTablesStatisticsAreNull(t *testing.T) {
	tab, _ := demo().Table("TABLES")
	want := []string{"TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "TABLE_TYPE", "ENGINE", "VERSION",
		"ROW_FORMAT", "TABLE_ROWS", "AVG_ROW_LENGTH", "DATA_LENGTH", "MAX_DATA_LENGTH", "INDEX_LENGTH",
		"DATA_FREE", "AUTO_INCREMENT", "CREATE_TIME", "UPDATE_TIME", "CHECK_TIME", "TABLE_COLLATION",
		"CHECKSUM", "CREATE_OPTIONS", "TABLE_COMMENT", "MAX_INDEX_LENGTH", "TEMPORARY"}
	if !slices.Equal(tab.Columns, want) {
		t.Fatalf("TABLES columns = %v", tab.Columns)
	}
	stats := []string{"TABLE_ROWS", "AVG_ROW_LENGTH", "DATA_LENGTH", "MAX_DATA_LENGTH", "INDEX_LENGTH",
		"DATA_FREE", "AUTO_INCREMENT", "CHECKSUM", "CREATE_TIME", "UPDATE_TIME", "CHECK_TIME", "MAX_INDEX_LENGTH"}
	var user []string
	for _, r := range tab.Rows {
		for _, s := range stats {
			if v := r[slices.Index(tab.Columns, s)]; v != nil {
				t.Errorf("%s.%s = %v, want NULL", r[2], s, v)
			}
		}
		if r[1] == "demo" {
			user = append(user, r[2].(string))
			if r[3] != "BASE TABLE" || r[4] != "InnoDB" {
				t.Errorf("%s: type %v engine %v", r[2], r[3], r[4])
			}
		}
	}
	if !slices.Equal(user, []string{"patients", "regions"}) {
		t.Errorf("demo tables = %v", user)
	}
}

// query runs SELECT <cols> FROM <table> WHERE <col> = <value> with package
// eval, as the engine does for a client's catalog query.
func query(t *testing.T, c *Catalog, table, whereCol string, value any, cols ...string) [][]any {
	t.Helper()
	tab, ok := c.Table(table)
	if !ok {
		t.Fatalf("no table %s", table)
	}
	var items []parser.SelectItem
	for _, col := range cols {
		items = append(items, parser.SelectItem{Expr: &parser.ColumnRef{Name: col}})
	}
	sel := &parser.Select{Items: items, From: &parser.TableName{Schema: InformationSchema, Name: table},
		Where: &parser.Binary{Op: parser.OpEQ, L: &parser.ColumnRef{Name: whereCol}, R: &parser.Literal{Value: value}}}
	_, rows, err := eval.Select(sel, tab, nil)
	if err != nil {
		t.Fatalf("SELECT FROM %s: %v", table, err)
	}
	return rows
}

func TestColumnsDescribeBackendTypes(t *testing.T) {
	c := demo()
	rows := query(t, c, "COLUMNS", "TABLE_NAME", "patients",
		"COLUMN_NAME", "ORDINAL_POSITION", "DATA_TYPE", "COLUMN_TYPE", "IS_NULLABLE", "COLUMN_KEY",
		"COLUMN_DEFAULT", "CHARACTER_SET_NAME", "CHARACTER_MAXIMUM_LENGTH")
	want := [][]any{
		{"id", int64(1), "bigint", "bigint(20)", "NO", "PRI", nil, nil, nil},
		{"age", int64(2), "bigint", "bigint(20)", "YES", "", "NULL", nil, nil},
		{"income", int64(3), "double", "double", "YES", "", "NULL", nil, nil},
		{"city", int64(4), "text", "text", "YES", "", "'Bern'", "utf8mb4", int64(65535)},
		{"code", int64(5), "varchar", "varchar(8)", "NO", "UNI", nil, "utf8mb4", int64(8)},
	}
	if len(rows) != len(want) {
		t.Fatalf("COLUMNS of patients: %v", rows)
	}
	for i := range want {
		if !slices.Equal(rows[i], want[i]) {
			t.Errorf("row %d = %v, want %v", i, rows[i], want[i])
		}
	}
	rows = query(t, c, "COLUMNS", "TABLE_NAME", "regions", "COLUMN_TYPE", "NUMERIC_PRECISION", "NUMERIC_SCALE")
	if len(rows) != 5 || rows[0][0] != "int(10) unsigned" || rows[3][0] != "decimal(10,2)" ||
		rows[3][1] != int64(10) || rows[3][2] != int64(2) {
		t.Errorf("COLUMNS of regions: %v", rows)
	}
	// information_schema describes itself too, so DESCRIBE and COLUMNS agree.
	rows = query(t, c, "COLUMNS", "TABLE_NAME", "TABLES", "COLUMN_NAME")
	if len(rows) != 23 || rows[7][0] != "TABLE_ROWS" {
		t.Errorf("COLUMNS of information_schema.TABLES: %d rows", len(rows))
	}
}

func TestSchemataCharsetsCollationsEngines(t *testing.T) {
	c := demo()
	if rows := query(t, c, "SCHEMATA", "SCHEMA_NAME", "demo", "DEFAULT_CHARACTER_SET_NAME", "DEFAULT_COLLATION_NAME"); len(rows) != 1 ||
		rows[0][0] != "utf8mb4" || rows[0][1] != "utf8mb4_general_ci" {
		t.Errorf("SCHEMATA demo = %v", rows)
	}
	if rows := query(t, c, "COLLATIONS", "COLLATION_NAME", "utf8mb4_unicode_ci", "ID", "CHARACTER_SET_NAME", "IS_DEFAULT"); len(rows) != 1 ||
		rows[0][0] != int64(224) || rows[0][1] != "utf8mb4" || rows[0][2] != "" {
		t.Errorf("COLLATIONS utf8mb4_unicode_ci = %v", rows)
	}
	if rows := query(t, c, "CHARACTER_SETS", "CHARACTER_SET_NAME", "utf8mb4", "DEFAULT_COLLATE_NAME", "MAXLEN"); len(rows) != 1 ||
		rows[0][0] != "utf8mb4_general_ci" || rows[0][1] != int64(4) {
		t.Errorf("CHARACTER_SETS utf8mb4 = %v", rows)
	}
	if rows := query(t, c, "ENGINES", "SUPPORT", "DEFAULT", "ENGINE"); len(rows) != 1 || rows[0][0] != "InnoDB" {
		t.Errorf("ENGINES default = %v", rows)
	}
	// Table hands out fresh rows: a caller that edits them changes nothing.
	e, _ := c.Table("ENGINES")
	e.Rows[0][0] = "MyISAM"
	if rows := query(t, c, "ENGINES", "SUPPORT", "DEFAULT", "ENGINE"); rows[0][0] != "InnoDB" {
		t.Errorf("editing a returned table changed the catalog: %v", rows)
	}
}
