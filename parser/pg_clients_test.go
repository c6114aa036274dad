package parser

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// pgClientQueries reads testdata/pg_client_queries.sql: statements that
// psql, pgjdbc, psycopg, SQLAlchemy and Metabase send by themselves, each
// after a "-- client: name" line.
func pgClientQueries(t testing.TB) (clients, queries []string) {
	t.Helper()
	data, err := os.ReadFile("testdata/pg_client_queries.sql")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(data), "-- client: ")
	for _, b := range blocks[1:] {
		client, sql, _ := strings.Cut(b, "\n")
		clients = append(clients, client)
		queries = append(queries, strings.TrimSpace(sql))
	}
	return clients, queries
}

// TestPGClientQueries parses every statement clients send on their own:
// the engine must be able to answer (or refuse) each one from the model.
func TestPGClientQueries(t *testing.T) {
	clients, queries := pgClientQueries(t)
	if len(queries) < 50 {
		t.Fatalf("read %d client queries, want the whole corpus", len(queries))
	}
	kinds := map[string]int{}
	for i, sql := range queries {
		stmt, _, err := Parse(sql, PostgreSQL)
		if err != nil {
			t.Errorf("%s: Parse(%q): %v", clients[i], sql, err)
			continue
		}
		kinds[pgNodeKind(stmt)]++
		checkItemTexts(t, clients[i], sql, stmt)
	}
	// The corpus is mostly catalog SELECTs, plus the session statements.
	if kinds["*parser.Select"]+kinds["*parser.SetOp"] < 40 || kinds["*parser.Set"] < 3 || kinds["*parser.Show"] < 3 {
		t.Errorf("statement kinds %v: the corpus lost its catalog reads or session statements", kinds)
	}
}

func pgNodeKind(s Statement) string { return fmt.Sprintf("%T", s) }

// checkItemTexts asserts that every select item's Text is a piece of the
// statement that starts where the item does and ends before the next one.
func checkItemTexts(t *testing.T, client, sql string, stmt Statement) {
	t.Helper()
	var sels []*Select
	var walk func(Statement)
	walk = func(s Statement) {
		switch x := s.(type) {
		case *Select:
			sels = append(sels, x)
		case *SetOp:
			walk(x.Left)
			walk(x.Right)
		}
	}
	walk(stmt)
	for _, sel := range sels {
		for _, item := range sel.Items {
			text := strings.TrimSpace(item.Text)
			switch {
			case item.Star:
			case text == "" || text != item.Text:
				t.Errorf("%s: item %s has text %q", client, dump(item.Expr), item.Text)
			case !strings.Contains(sql, text):
				t.Errorf("%s: item text %q is not in the statement", client, text)
			case strings.HasSuffix(text, ","):
				t.Errorf("%s: item text %q runs into the next item", client, text)
			case item.DefaultName == "":
				t.Errorf("%s: item %q has no default name", client, text)
			}
		}
	}
}

// TestPGClientColumnNames checks the names psql shows for the headers of
// \dt, where a name comes from an alias, and of driver probes, where it
// comes from PostgreSQL's FigureColname.
func TestPGClientColumnNames(t *testing.T) {
	tests := []struct {
		sql   string
		names []string
	}{
		{"select pg_catalog.version()", []string{"version"}},
		{"select current_schema()", []string{"current_schema"}},
		{"SELECT current_setting('server_version_num')", []string{"current_setting"}},
		{"SELECT 1", []string{"?column?"}},
		{`SELECT n.nspname as "Schema", c.relname as "Name", c.oid::pg_catalog.regclass FROM pg_catalog.pg_class c`, []string{"Schema", "Name", "oid"}},
	}
	for _, tt := range tests {
		stmt, _ := mustParsePG(t, tt.sql)
		var got []string
		for _, item := range stmt.(*Select).Items {
			name := item.Alias
			if name == "" {
				name = item.DefaultName
			}
			got = append(got, name)
		}
		if strings.Join(got, "|") != strings.Join(tt.names, "|") {
			t.Errorf("Parse(%q) names columns %q, want %q", tt.sql, got, tt.names)
		}
	}
}

// The exact model of psql's \d pattern lookup: OPERATOR(pg_catalog.~),
// COLLATE pg_catalog.default and a schema-qualified function.
func TestPGPsqlDescribeLookup(t *testing.T) {
	sql := `SELECT c.oid,
  n.nspname,
  c.relname
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname OPERATOR(pg_catalog.~) '^(adult)$' COLLATE pg_catalog.default
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 2, 3;`
	want := &Select{
		Items: []SelectItem{
			pgItem(tcol("c", "oid"), "c.oid", "oid"),
			pgItem(tcol("n", "nspname"), "n.nspname", "nspname"),
			pgItem(tcol("c", "relname"), "c.relname", "relname"),
		},
		From: &Join{Kind: "left",
			Left:  &TableName{Schema: "pg_catalog", Name: "pg_class", Alias: "c"},
			Right: &TableName{Schema: "pg_catalog", Name: "pg_namespace", Alias: "n"},
			On:    bin(OpEQ, tcol("n", "oid"), tcol("c", "relnamespace"))},
		Where: bin(OpAnd,
			bin(OpRegex, tcol("c", "relname"), lit("^(adult)$")),
			&Func{Schema: "pg_catalog", Name: "pg_table_is_visible", Args: []Expr{tcol("c", "oid")}}),
		OrderBy: []OrderItem{{Expr: lit(int64(2))}, {Expr: lit(int64(3))}},
	}
	stmt, _ := mustParsePG(t, sql)
	checkModel(t, sql, stmt, want)
}
