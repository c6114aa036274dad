package pgcatalog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/backend"
	"github.com/dpproxy/dpproxy/catalog"
	"github.com/dpproxy/dpproxy/parser"
)

// newTestCatalog serves adult and pums as the PostgreSQL backend describes
// them (information_schema data_type), with one default to show.
func newTestCatalog(t *testing.T) *Catalog {
	t.Helper()
	cols := func(spec string) []backend.ColumnInfo {
		var out []backend.ColumnInfo
		for _, f := range strings.Split(spec, ",") {
			name, typ, _ := strings.Cut(strings.TrimSpace(f), " ")
			out = append(out, backend.ColumnInfo{Name: name, Type: typ})
		}
		return out
	}
	adult := cols("age bigint, workclass text, fnlwgt bigint, education text, education_num bigint, marital_status text, " +
		"occupation text, relationship text, race text, sex text, capital_gain bigint, capital_loss bigint, " +
		"hours_per_week bigint, native_country text, income text")
	pums := cols("age bigint, sex bigint, educ bigint, race bigint, income bigint, married bigint, pid bigint")
	c, err := New("dp", "", []catalog.TableInfo{{Name: "pums", Columns: pums}, {Name: "adult", Columns: adult}}, "15.18")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var testSession = Session{User: "alice", Database: "dp", ApplicationName: "psql"}

type namedQuery struct{ name, sql string }

// readQueries reads a testdata file of "-- query: name" blocks.
func readQueries(t *testing.T, file string) []namedQuery {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var out []namedQuery
	for _, block := range strings.Split(string(b), "-- query: ")[1:] {
		name, sql, _ := strings.Cut(block, "\n")
		out = append(out, namedQuery{strings.TrimSpace(name), strings.TrimSpace(sql)})
	}
	return out
}

func run(t *testing.T, c *Catalog, sql string, params ...any) ([]Column, [][]any) {
	t.Helper()
	cols, rows, err := tryRun(t, c, sql, params...)
	if err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
	return cols, rows
}

func tryRun(t *testing.T, c *Catalog, sql string, params ...any) ([]Column, [][]any, error) {
	t.Helper()
	stmt, _, err := parser.Parse(sql, parser.PostgreSQL)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, sql)
	}
	if !c.IsCatalogQuery(stmt) {
		t.Fatalf("not classified as a catalog query:\n%s", sql)
	}
	return c.Query(context.Background(), stmt, testSession, params...)
}

// TestClientQueries runs every captured client query: each must parse,
// classify as a catalog query and run.
func TestClientQueries(t *testing.T) {
	c := newTestCatalog(t)
	oid := strconv.FormatUint(uint64(c.tableOID["adult"]), 10)
	for _, file := range []string{"psql.sql", "pgjdbc.sql", "sqlalchemy.sql", "psycopg.sql", "bi.sql"} {
		for _, q := range readQueries(t, file) {
			t.Run(q.name, func(t *testing.T) {
				var params []any
				if strings.Contains(q.sql, "$1") {
					params = []any{"bigint"}
				}
				run(t, c, strings.ReplaceAll(q.sql, "{{adult_oid}}", oid), params...)
			})
		}
	}
}

func queryByName(t *testing.T, c *Catalog, file, name string, params ...any) ([]Column, [][]any) {
	t.Helper()
	for _, q := range readQueries(t, file) {
		if q.name == name {
			oid := strconv.FormatUint(uint64(c.tableOID["adult"]), 10)
			return run(t, c, strings.ReplaceAll(q.sql, "{{adult_oid}}", oid), params...)
		}
	}
	t.Fatalf("no query %s in %s", name, file)
	return nil, nil
}

func TestPsqlListTables(t *testing.T) {
	c := newTestCatalog(t)
	cols, rows := queryByName(t, c, "psql.sql", "psql_dt")
	if got := colNames(cols); got != "Schema,Name,Type,Owner" {
		t.Errorf("columns = %s", got)
	}
	want := [][]any{{"public", "adult", "table", "dpproxy"}, {"public", "pums", "table", "dpproxy"}}
	assertRows(t, rows, want)
}

func TestPsqlDescribeAdult(t *testing.T) {
	c := newTestCatalog(t)
	_, rows := queryByName(t, c, "psql.sql", "psql_d_lookup")
	assertRows(t, rows, [][]any{{int64(c.tableOID["adult"]), "public", "adult"}})

	_, rows = queryByName(t, c, "psql.sql", "psql_d_table")
	// relchecks, relkind, relhasindex, ... as psql reads them.
	if len(rows) != 1 || rows[0][1] != "r" || rows[0][2] != false {
		t.Fatalf("table row = %v", rows)
	}
	cols, rows := queryByName(t, c, "psql.sql", "psql_d_columns")
	if len(rows) != 15 {
		t.Fatalf("\\d adult lists %d columns, want 15", len(rows))
	}
	if cols[3].OID != OIDBool || cols[0].OID != OIDName {
		t.Errorf("column types = %v", cols)
	}
	// The sample tables are NOT NULL, as sampledata creates them.
	assertRows(t, rows[:2], [][]any{{"age", "bigint", nil, true, nil, "", ""}, {"workclass", "text", nil, true, nil, "", ""}})
	for _, q := range []string{"psql_d_policies", "psql_d_statistics", "psql_d_publications", "psql_d_inherits", "psql_d_partitions"} {
		if _, rows := queryByName(t, c, "psql.sql", q); len(rows) != 0 {
			t.Errorf("%s: %v, want no rows", q, rows)
		}
	}
}

func TestPsqlListDatabasesAndSchemas(t *testing.T) {
	c := newTestCatalog(t)
	_, rows := queryByName(t, c, "psql.sql", "psql_l")
	assertRows(t, rows, [][]any{{"dp", "dpproxy", "UTF8", "C.UTF-8", "C.UTF-8", nil, "libc", nil}})
	_, rows = queryByName(t, c, "psql.sql", "psql_dn")
	assertRows(t, rows, [][]any{{"public", "dpproxy"}})
	_, rows = queryByName(t, c, "psql.sql", "psql_dtplus")
	if len(rows) != 2 || rows[0][6] != nil {
		t.Errorf("\\dt+ = %v, want two tables with the size hidden (NULL)", rows)
	}
}

func TestPgjdbcMetadata(t *testing.T) {
	c := newTestCatalog(t)
	_, rows := queryByName(t, c, "pgjdbc.sql", "pgjdbc_getTables")
	if len(rows) != 2 || rows[0][2] != "adult" || rows[0][3] != "TABLE" || rows[1][2] != "pums" {
		t.Errorf("getTables = %v", rows)
	}
	cols, rows := queryByName(t, c, "pgjdbc.sql", "pgjdbc_getColumns")
	if len(rows) != 15 {
		t.Fatalf("getColumns returned %d rows for adult, want 15", len(rows))
	}
	idx := map[string]int{}
	for i, col := range cols {
		idx[col.Name] = i
	}
	first, last := rows[0], rows[14]
	if first[idx["attname"]] != "age" || first[idx["atttypid"]] != int64(OIDInt8) || first[idx["attnum"]] != int64(1) ||
		first[idx["attnotnull"]] != true || first[idx["typtype"]] != "b" {
		t.Errorf("first column = %v (%v)", first, cols)
	}
	if last[idx["attname"]] != "income" || last[idx["atttypid"]] != int64(OIDText) || last[idx["attnum"]] != int64(15) {
		t.Errorf("last column = %v", last)
	}
	_, rows = queryByName(t, c, "pgjdbc.sql", "pgjdbc_getSchemas")
	assertRows(t, rows, [][]any{{"information_schema", nil}, {"pg_catalog", nil}, {"public", nil}})
	if _, rows = queryByName(t, c, "pgjdbc.sql", "pgjdbc_getPrimaryKeys"); len(rows) != 0 {
		t.Errorf("getPrimaryKeys = %v, want none", rows)
	}
}

func TestSQLAlchemyReflection(t *testing.T) {
	c := newTestCatalog(t)
	_, rows := queryByName(t, c, "sqlalchemy.sql", "sqlalchemy_get_table_names")
	assertRows(t, rows, [][]any{{"adult"}, {"pums"}})
	_, rows = queryByName(t, c, "sqlalchemy.sql", "sqlalchemy_has_table")
	assertRows(t, rows, [][]any{{"adult"}})
	_, rows = queryByName(t, c, "sqlalchemy.sql", "sqlalchemy_get_columns")
	if len(rows) != 15 || rows[0][0] != "age" || rows[0][1] != "bigint" || rows[1][1] != "text" || rows[0][3] != true {
		t.Errorf("get_columns = %v", rows)
	}
	_, rows = queryByName(t, c, "sqlalchemy.sql", "sqlalchemy_get_schema_names")
	assertRows(t, rows, [][]any{{"information_schema"}, {"public"}})
	_, rows = queryByName(t, c, "sqlalchemy.sql", "sqlalchemy_version")
	if v, _ := rows[0][0].(string); !strings.HasPrefix(v, "PostgreSQL 15.18") {
		t.Errorf("version() = %v", rows)
	}
}

func TestPsycopgTypeInfo(t *testing.T) {
	c := newTestCatalog(t)
	cols, rows := queryByName(t, c, "psycopg.sql", "psycopg_typeinfo", "bigint")
	assertRows(t, rows, [][]any{{"int8", int64(20), int64(1016), "bigint", ","}})
	if cols[1].OID != OIDOid || cols[3].OID != OIDText {
		t.Errorf("column types = %v", cols)
	}
	if _, _, err := tryRun(t, c, "SELECT oid FROM pg_type WHERE oid = $1::regtype", "no_such_type"); err == nil {
		t.Error("an unknown type name was accepted")
	}
}

func TestBIStartup(t *testing.T) {
	c := newTestCatalog(t)
	_, rows := queryByName(t, c, "bi.sql", "bi_server_version_num")
	assertRows(t, rows, [][]any{{"150018"}})
	_, rows = queryByName(t, c, "bi.sql", "bi_current_user")
	assertRows(t, rows, [][]any{{"alice", "dp", "alice"}})
	_, rows = queryByName(t, c, "bi.sql", "bi_info_tables")
	assertRows(t, rows, [][]any{{"public", "adult", "BASE TABLE"}, {"public", "pums", "BASE TABLE"}})
	_, rows = queryByName(t, c, "bi.sql", "bi_info_columns")
	if len(rows) != 15 || rows[0][1] != "bigint" || rows[0][2] != "NO" || rows[14][3] != int64(15) {
		t.Errorf("information_schema.columns = %v", rows)
	}
	_, rows = queryByName(t, c, "bi.sql", "bi_privileges")
	assertRows(t, rows, [][]any{{"public", "adult", true, false}, {"public", "pums", true, false}})
}

// TestNoRowCountsOrStatistics: the size estimates of every relation are
// those of a never-analysed table, and the statistics are refused.
func TestNoRowCountsOrStatistics(t *testing.T) {
	c := newTestCatalog(t)
	_, rows := run(t, c, "SELECT relname, reltuples, relpages, relallvisible FROM pg_catalog.pg_class")
	if len(rows) < 3 {
		t.Fatalf("pg_class has %d rows", len(rows))
	}
	for _, r := range rows {
		if r[1] != float64(-1) || r[2] != int64(0) || r[3] != int64(0) {
			t.Errorf("pg_class row %v reveals a size estimate", r)
		}
	}
	for _, sql := range []string{
		"SELECT * FROM pg_stats WHERE tablename = 'adult'",
		"SELECT * FROM pg_catalog.pg_statistic",
		"SELECT n_live_tup FROM pg_stat_user_tables",
		"SELECT c.relname FROM pg_class c JOIN pg_catalog.pg_stats s ON s.tablename = c.relname",
		"SELECT query_to_xml('select * from adult', true, true, '')",
		"SELECT * FROM pg_class WHERE relname IN (SELECT dblink('x', 'select 1'))",
		"SELECT pg_read_file('/etc/passwd')",
		"SELECT relname FROM pg_class WHERE relname = (SELECT workclass FROM adult LIMIT 1)",
		"SELECT set_config('search_path', 'x', false)",
	} {
		_, _, err := tryRun(t, c, sql)
		var re *RefusedError
		if !errors.As(err, &re) || re.SQLState() != "42501" {
			t.Errorf("%s: err = %v, want a refusal", sql, err)
		}
	}
	_, rows = run(t, c, "SELECT pg_table_size('adult'::regclass), pg_total_relation_size(c.oid) FROM pg_class c WHERE relname = 'adult'")
	assertRows(t, rows, [][]any{{nil, nil}})
}

func TestUnknownRelationsAndFunctions(t *testing.T) {
	c := newTestCatalog(t)
	_, _, err := tryRun(t, c, "SELECT * FROM pg_class c JOIN nosuch n ON true")
	var ue *UndefinedTableError
	if !errors.As(err, &ue) {
		t.Errorf("unknown table: err = %v", err)
	}
	_, _, err = tryRun(t, c, "SELECT pg_catalog.my_func(oid) FROM pg_class")
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Errorf("unlisted function: err = %v", err)
	}
	stmt, _, _ := parser.Parse("SELECT count(*) FROM adult", parser.PostgreSQL)
	if c.IsCatalogQuery(stmt) {
		t.Error("a DP query was classified as a catalog query")
	}
	stmt, _, _ = parser.Parse("SELECT 1", parser.PostgreSQL)
	if c.IsCatalogQuery(stmt) {
		t.Error("SELECT 1 was classified as a catalog query")
	}
}

func TestRegclassAndArrays(t *testing.T) {
	c := newTestCatalog(t)
	cols, rows := run(t, c, "SELECT 'adult'::regclass, 'public.adult'::regclass::oid, 'pg_class'::regclass::text, "+
		"ARRAY['a', 'b c'], 'x' = ANY(ARRAY['x','y']), (current_schemas(true))[1]")
	assertRows(t, rows, [][]any{{"adult", int64(c.tableOID["adult"]), "pg_class", `{a,"b c"}`, true, "pg_catalog"}})
	if cols[0].OID != OIDRegclass || cols[3].OID != OIDTextArray {
		t.Errorf("types = %v", cols)
	}
	if _, _, err := tryRun(t, c, "SELECT 'nosuch'::regclass"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("unknown regclass: err = %v", err)
	}
	// LIKE is case-sensitive and escapes with a backslash, as in PostgreSQL.
	_, rows = run(t, c, `SELECT attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid `+
		`WHERE c.relname = 'adult' AND attname LIKE 'education\_%' ORDER BY attnum`)
	assertRows(t, rows, [][]any{{"education_num"}})
	_, rows = run(t, c, `SELECT relname FROM pg_class WHERE relname LIKE 'ADULT'`)
	assertRows(t, rows, nil)
}

func TestShow(t *testing.T) {
	c := newTestCatalog(t)
	sess := testSession
	sess.Settings = func(name string) (string, bool) {
		if name == "extra_float_digits" {
			return "3", true
		}
		return "", false
	}
	for name, want := range map[string]string{
		"server_version": "15.18", "server_version_num": "150018", "standard_conforming_strings": "on",
		"client_encoding": "UTF8", "DateStyle": "ISO, MDY", "TimeZone": "UTC", "transaction_isolation": "read committed",
		"search_path": `"$user", public`, "integer_datetimes": "on", "max_identifier_length": "63",
		"is_superuser": "off", "application_name": "psql", "extra_float_digits": "3",
	} {
		if got, err := c.Show(name, sess); err != nil || got != want {
			t.Errorf("SHOW %s = %q, %v; want %q", name, got, err, want)
		}
	}
	var ue *UnknownSettingError
	if _, err := c.Show("no_such_setting", sess); !errors.As(err, &ue) || ue.SQLState() != "42704" {
		t.Errorf("unknown setting: err = %v", err)
	}
}

func colNames(cols []Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return strings.Join(names, ",")
}

func assertRows(t *testing.T, got, want [][]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d rows %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("row %d = %v, want %v", i, got[i], want[i])
		}
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Errorf("row %d column %d = %#v, want %#v (row %v)", i, j, got[i][j], want[i][j], got[i])
			}
		}
	}
}
