package catalog

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/parser"
)

func show(t *testing.T, c *Catalog, s *parser.Show, sess SessionInfo) ([]string, [][]any) {
	t.Helper()
	cols, rows, err := c.Show(s, sess)
	if err != nil {
		t.Fatalf("Show(%+v): %v", s, err)
	}
	for _, r := range rows {
		if len(r) != len(cols) {
			t.Fatalf("Show(%+v): row %v for columns %v", s, r, cols)
		}
	}
	return cols, rows
}

func eq(col string, v any) parser.Expr {
	return &parser.Binary{Op: parser.OpEQ, L: &parser.ColumnRef{Name: col}, R: &parser.Literal{Value: v}}
}

func TestShowColumnNames(t *testing.T) {
	c := demo()
	for _, tc := range []struct {
		show *parser.Show
		cols string
	}{
		{&parser.Show{Kind: parser.ShowDatabases}, "Database"},
		{&parser.Show{Kind: parser.ShowTables}, "Tables_in_demo"},
		{&parser.Show{Kind: parser.ShowTables, Full: true}, "Tables_in_demo Table_type"},
		{&parser.Show{Kind: parser.ShowColumns, Table: "patients"}, "Field Type Null Key Default Extra"},
		{&parser.Show{Kind: parser.ShowColumns, Table: "patients", Full: true},
			"Field Type Collation Null Key Default Extra Privileges Comment"},
		{&parser.Show{Kind: parser.ShowVariables}, "Variable_name Value"},
		{&parser.Show{Kind: parser.ShowStatus}, "Variable_name Value"},
		{&parser.Show{Kind: parser.ShowWarnings}, "Level Code Message"},
		{&parser.Show{Kind: parser.ShowErrors}, "Level Code Message"},
		{&parser.Show{Kind: parser.ShowCollation}, "Collation Charset Id Default Compiled Sortlen"},
		{&parser.Show{Kind: parser.ShowCharset}, "Charset Description Default collation Maxlen"},
		{&parser.Show{Kind: parser.ShowCreateTable, Table: "regions"}, "Table Create Table"},
		{&parser.Show{Kind: parser.ShowTableStatus}, "Name Engine Version Row_format Rows Avg_row_length " +
			"Data_length Max_data_length Index_length Data_free Auto_increment Create_time Update_time " +
			"Check_time Collation Checksum Create_options Comment Max_index_length Temporary"},
		{&parser.Show{Kind: parser.ShowIndex, Table: "patients"}, "Table Non_unique Key_name Seq_in_index " +
			"Column_name Collation Cardinality Sub_part Packed Null Index_type Comment Index_comment Ignored"},
		{&parser.Show{Kind: parser.ShowEngines}, "Engine Support Comment Transactions XA Savepoints"},
		{&parser.Show{Kind: parser.ShowGrants}, "Grants for alice@%"},
		{&parser.Show{Kind: parser.ShowVariable, Name: "Version"}, "version"},
	} {
		cols, _ := show(t, c, tc.show, alice)
		// Column names may hold spaces ("Create Table"): compare joined by one.
		if got := strings.Join(cols, " "); got != tc.cols {
			t.Errorf("SHOW kind %d: columns %q, want %q", tc.show.Kind, got, tc.cols)
		}
	}
}

func TestShowDatabasesAndTables(t *testing.T) {
	c := demo()
	_, rows := show(t, c, &parser.Show{Kind: parser.ShowDatabases}, SessionInfo{})
	if got := firstColumn(rows); !slices.Equal(got, []any{"information_schema", "demo"}) {
		t.Errorf("SHOW DATABASES = %v", got)
	}
	cols, rows := show(t, c, &parser.Show{Kind: parser.ShowDatabases, Like: "d%"}, SessionInfo{})
	if cols[0] != "Database (d%)" || len(rows) != 1 || rows[0][0] != "demo" {
		t.Errorf("SHOW DATABASES LIKE 'd%%' = %v %v", cols, rows)
	}
	_, rows = show(t, c, &parser.Show{Kind: parser.ShowTables, Full: true}, alice)
	if len(rows) != 2 || rows[0][0] != "patients" || rows[0][1] != "BASE TABLE" || rows[1][0] != "regions" {
		t.Errorf("SHOW FULL TABLES = %v", rows)
	}
	cols, rows = show(t, c, &parser.Show{Kind: parser.ShowTables, Like: "reg%"}, alice)
	if cols[0] != "Tables_in_demo (reg%)" || len(rows) != 1 || rows[0][0] != "regions" {
		t.Errorf("SHOW TABLES LIKE 'reg%%' = %v %v", cols, rows)
	}
	// Table names compare case-sensitively (lower_case_table_names=0).
	if _, rows = show(t, c, &parser.Show{Kind: parser.ShowTables, Like: "REG%"}, alice); len(rows) != 0 {
		t.Errorf("SHOW TABLES LIKE 'REG%%' = %v, want none", rows)
	}
	_, rows = show(t, c, &parser.Show{Kind: parser.ShowTables, Where: eq("Tables_in_demo", "patients")}, alice)
	if len(rows) != 1 || rows[0][0] != "patients" {
		t.Errorf("SHOW TABLES WHERE = %v", rows)
	}
	cols, rows = show(t, c, &parser.Show{Kind: parser.ShowTables, Schema: "INFORMATION_SCHEMA", Full: true}, SessionInfo{})
	if cols[0] != "Tables_in_information_schema" || !slices.Contains(firstColumn(rows), any("COLUMNS")) || rows[0][1] != "SYSTEM VIEW" {
		t.Errorf("SHOW FULL TABLES FROM information_schema = %v %v", cols, rows)
	}
}

func TestShowErrorsForUnknownNames(t *testing.T) {
	c := demo()
	_, _, err := c.Show(&parser.Show{Kind: parser.ShowTables, Schema: "mysql"}, alice)
	var udb *UnknownDBError
	if !errors.As(err, &udb) || udb.DB != "mysql" {
		t.Errorf("SHOW TABLES FROM mysql: %v", err)
	}
	_, _, err = c.Show(&parser.Show{Kind: parser.ShowTables}, SessionInfo{User: "alice"})
	var nodb *NoDatabaseError
	if !errors.As(err, &nodb) {
		t.Errorf("SHOW TABLES without a database: %v", err)
	}
	for _, kind := range []parser.ShowKind{parser.ShowColumns, parser.ShowCreateTable, parser.ShowIndex} {
		_, _, err = c.Show(&parser.Show{Kind: kind, Table: "secrets"}, alice)
		var ut *UnknownTableError
		if !errors.As(err, &ut) || err.Error() != "Table 'demo.secrets' doesn't exist" {
			t.Errorf("SHOW kind %d of an unknown table: %v", kind, err)
		}
	}
	_, _, err = c.Show(&parser.Show{Kind: parser.ShowVariable, Name: "no_such_thing"}, alice)
	var uv *UnknownVariableError
	if !errors.As(err, &uv) {
		t.Errorf("SHOW no_such_thing: %v", err)
	}
	_, _, err = c.Show(&parser.Show{Kind: parser.ShowTables, Where: eq("no_such_column", 1)}, alice)
	if err == nil {
		t.Error("SHOW TABLES WHERE on an unknown column succeeded")
	}
}

func TestShowColumns(t *testing.T) {
	c := demo()
	_, rows := show(t, c, &parser.Show{Kind: parser.ShowColumns, Table: "Patients"}, alice)
	want := [][]any{
		{"id", "bigint(20)", "NO", "PRI", nil, ""},
		{"age", "bigint(20)", "YES", "", nil, ""},
		{"income", "double", "YES", "", nil, ""},
		{"city", "text", "YES", "", "Bern", ""},
		{"code", "varchar(8)", "NO", "UNI", nil, ""},
	}
	if len(rows) != len(want) {
		t.Fatalf("DESCRIBE patients = %v", rows)
	}
	for i := range want {
		if !slices.Equal(rows[i], want[i]) {
			t.Errorf("DESCRIBE patients row %d = %v, want %v", i, rows[i], want[i])
		}
	}
	_, rows = show(t, c, &parser.Show{Kind: parser.ShowColumns, Table: "regions", Schema: "demo", Full: true, Like: "NA%"}, SessionInfo{})
	if len(rows) != 1 || !slices.Equal(rows[0], []any{"name", "varchar(50)", "utf8mb4_general_ci", "YES", "", nil, "", "select", ""}) {
		t.Errorf("SHOW FULL COLUMNS FROM demo.regions LIKE 'NA%%' = %v", rows)
	}
	_, rows = show(t, c, &parser.Show{Kind: parser.ShowColumns, Table: "regions", Where: eq("Key", "PRI")}, alice)
	if len(rows) != 1 || rows[0][0] != "region_id" {
		t.Errorf("SHOW COLUMNS WHERE Key = 'PRI' = %v", rows)
	}
	_, rows = show(t, c, &parser.Show{Kind: parser.ShowColumns, Table: "tables", Schema: "information_schema"}, alice)
	if len(rows) != 23 || rows[7][0] != "TABLE_ROWS" || rows[7][1] != "bigint(21) unsigned" {
		t.Errorf("DESCRIBE information_schema.tables = %v", rows)
	}
}

func TestShowCreateTable(t *testing.T) {
	c := demo()
	_, rows := show(t, c, &parser.Show{Kind: parser.ShowCreateTable, Table: "patients"}, alice)
	want := "CREATE TABLE `patients` (\n" +
		"  `id` bigint(20) NOT NULL,\n" +
		"  `age` bigint(20) DEFAULT NULL,\n" +
		"  `income` double DEFAULT NULL,\n" +
		"  `city` text DEFAULT 'Bern',\n" +
		"  `code` varchar(8) NOT NULL,\n" +
		"  PRIMARY KEY (`id`),\n" +
		"  UNIQUE KEY `code` (`code`)\n" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci " +
		"COMMENT='private: differentially private aggregates only'"
	if rows[0][0] != "patients" || rows[0][1] != want {
		t.Errorf("SHOW CREATE TABLE patients =\n%v\nwant\n%s", rows[0][1], want)
	}
	_, rows = show(t, c, &parser.Show{Kind: parser.ShowCreateTable, Table: "regions"}, alice)
	if s := rows[0][1].(string); !strings.Contains(s, "`name` varchar(50) DEFAULT NULL,") ||
		!strings.Contains(s, "`population` bigint(20) DEFAULT 0,") || !strings.Contains(s, "COMMENT='public'") {
		t.Errorf("SHOW CREATE TABLE regions =\n%s", s)
	}
}

func TestShowTableStatusHidesStatistics(t *testing.T) {
	c := demo()
	cols, rows := show(t, c, &parser.Show{Kind: parser.ShowTableStatus}, alice)
	if len(rows) != 2 {
		t.Fatalf("SHOW TABLE STATUS = %v", rows)
	}
	for _, r := range rows {
		for _, name := range []string{"Rows", "Avg_row_length", "Data_length", "Max_data_length", "Index_length",
			"Data_free", "Auto_increment", "Create_time", "Update_time", "Check_time", "Checksum", "Max_index_length"} {
			if v := r[colIndex(t, cols, name)]; v != nil {
				t.Errorf("%s.%s = %v, want NULL", r[0], name, v)
			}
		}
		if r[colIndex(t, cols, "Engine")] != "InnoDB" || r[colIndex(t, cols, "Collation")] != "utf8mb4_general_ci" {
			t.Errorf("SHOW TABLE STATUS row %v", r)
		}
	}
	_, rows = show(t, c, &parser.Show{Kind: parser.ShowTableStatus, Like: "pat%"}, alice)
	if len(rows) != 1 || rows[0][0] != "patients" || rows[0][colIndex(t, cols, "Comment")] != tableComment(TableInfo{}) {
		t.Errorf("SHOW TABLE STATUS LIKE 'pat%%' = %v", rows)
	}
}

func TestShowCollationAndCharset(t *testing.T) {
	c := demo()
	_, rows := show(t, c, &parser.Show{Kind: parser.ShowCollation, Like: "UTF8MB4%"}, alice)
	got := map[any]any{}
	for _, r := range rows {
		got[r[0]] = r[2]
	}
	if len(rows) != 3 || got["utf8mb4_general_ci"] != int64(45) || got["utf8mb4_bin"] != int64(46) ||
		got["utf8mb4_unicode_ci"] != int64(224) {
		t.Errorf("SHOW COLLATION LIKE 'utf8mb4%%' = %v", rows)
	}
	_, rows = show(t, c, &parser.Show{Kind: parser.ShowCollation, Where: eq("Default", "Yes")}, alice)
	ids := map[any]any{}
	for _, r := range rows {
		ids[r[0]] = r[2]
	}
	if ids["latin1_swedish_ci"] != int64(8) || ids["binary"] != int64(63) || ids["utf8mb3_general_ci"] != int64(33) ||
		ids["utf8mb4_general_ci"] != int64(45) || len(ids) != 4 {
		t.Errorf("SHOW COLLATION WHERE Default = 'Yes' = %v", rows)
	}
	_, rows = show(t, c, &parser.Show{Kind: parser.ShowCharset, Like: "utf8mb4"}, alice)
	if len(rows) != 1 || !slices.Equal(rows[0], []any{"utf8mb4", "UTF-8 Unicode", "utf8mb4_general_ci", int64(4)}) {
		t.Errorf("SHOW CHARACTER SET LIKE 'utf8mb4' = %v", rows)
	}
}

func TestShowSessionAndServerState(t *testing.T) {
	c := demo()
	sess := alice
	sess.Warnings = []string{"noise added: epsilon 0.5 charged"}
	_, rows := show(t, c, &parser.Show{Kind: parser.ShowWarnings}, sess)
	if len(rows) != 1 || !slices.Equal(rows[0], []any{"Warning", int64(1105), "noise added: epsilon 0.5 charged"}) {
		t.Errorf("SHOW WARNINGS = %v", rows)
	}
	if _, rows = show(t, c, &parser.Show{Kind: parser.ShowErrors}, sess); len(rows) != 0 {
		t.Errorf("SHOW ERRORS = %v", rows)
	}
	_, rows = show(t, c, &parser.Show{Kind: parser.ShowGrants}, alice)
	if len(rows) != 1 || rows[0][0] != "GRANT SELECT ON `demo`.* TO `alice`@`%`" {
		t.Errorf("SHOW GRANTS = %v", rows)
	}
	_, rows = show(t, c, &parser.Show{Kind: parser.ShowEngines}, alice)
	if len(rows) != 1 || rows[0][0] != "InnoDB" || rows[0][1] != "DEFAULT" {
		t.Errorf("SHOW ENGINES = %v", rows)
	}
	if _, rows = show(t, c, &parser.Show{Kind: parser.ShowIndex, Table: "patients"}, alice); len(rows) != 0 {
		t.Errorf("SHOW INDEX = %v, want no rows", rows)
	}
	sess.Connections = 7
	_, rows = show(t, c, &parser.Show{Kind: parser.ShowStatus, Like: "threads%"}, sess)
	if len(rows) != 1 || !slices.Equal(rows[0], []any{"Threads_connected", "7"}) {
		t.Errorf("SHOW STATUS LIKE 'threads%%' = %v", rows)
	}
	_, rows = show(t, c, &parser.Show{Kind: parser.ShowStatus, Where: eq("Variable_name", "Uptime")}, alice)
	if len(rows) != 1 || rows[0][0] != "Uptime" {
		t.Errorf("SHOW STATUS WHERE Variable_name = 'Uptime' = %v", rows)
	}
}
