package catalog

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/parser"
)

func ptr(s string) *string { return &s }

// demo is a catalog like the demo's: SQLite types, one public and one
// private table, plus a table with MariaDB's own type names.
func demo() *Catalog {
	return New("demo", []TableInfo{
		{Name: "Patients", Columns: []ColumnInfo{
			{Name: "id", Type: "INTEGER", Key: "PRI"},
			{Name: "age", Type: "INTEGER", Nullable: true},
			{Name: "income", Type: "REAL", Nullable: true},
			{Name: "city", Type: "TEXT", Nullable: true, Default: ptr("'Bern'")},
			{Name: "code", Type: "VARCHAR(8)", Nullable: false, Key: "UNI"},
		}},
		{Name: "regions", Public: true, Columns: []ColumnInfo{
			{Name: "region_id", Type: "int(10) unsigned", Key: "PRI"},
			{Name: "name", Type: "varchar(50)", Nullable: true, Default: ptr("NULL")},
			{Name: "population", Type: "bigint(20)", Nullable: true, Default: ptr("0")},
			{Name: "area", Type: "decimal(10,2)", Nullable: true},
			{Name: "founded", Type: "date", Nullable: true},
		}},
	}, "10.11.6-MariaDB")
}

var alice = SessionInfo{User: "alice", Database: "demo"}

func TestNewNormalisesAndLooksUp(t *testing.T) {
	c := demo()
	if c.Database() != "demo" {
		t.Errorf("Database() = %q", c.Database())
	}
	tab, ok := c.Lookup("PATIENTS")
	if !ok || tab.Name != "patients" || len(tab.Columns) != 5 {
		t.Fatalf("Lookup(PATIENTS) = %+v, %v", tab, ok)
	}
	if _, ok := c.Lookup("secrets"); ok {
		t.Error("Lookup found a table the catalog was not given")
	}
}

func TestErrorsReadLikeMySQL(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&UnknownTableError{DB: "demo", Table: "x"}, "Table 'demo.x' doesn't exist"},
		{&UnknownDBError{DB: "x"}, "Unknown database 'x'"},
		{&NoDatabaseError{}, "No database selected"},
		{&UnknownVariableError{Name: "foo"}, "Unknown system variable 'foo'"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func colIndex(t *testing.T, cols []string, name string) int {
	t.Helper()
	i := slices.Index(cols, name)
	if i < 0 {
		t.Fatalf("no column %s in %v", name, cols)
	}
	return i
}

func firstColumn(rows [][]any) []any {
	var out []any
	for _, r := range rows {
		out = append(out, r[0])
	}
	return out
}

func TestShowUnknownKindFails(t *testing.T) {
	_, _, err := demo().Show(&parser.Show{Kind: parser.ShowKind(999)}, alice)
	if err == nil {
		t.Fatal("unknown SHOW kind answered")
	}
}

func TestProcessListRefused(t *testing.T) {
	_, _, err := demo().Show(&parser.Show{Kind: parser.ShowProcessList}, alice)
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "other sessions") {
		t.Fatalf("SHOW PROCESSLIST: err = %v, want a RefusedError", err)
	}
}
