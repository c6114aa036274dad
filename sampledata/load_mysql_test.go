package sampledata

import (
	"database/sql"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// TestLoadIntoMySQL runs against the MariaDB that scripts/test.sh starts: it
// loads the tables (a no-op if the script's load-sample already did) and
// compares the server's counts with the embedded files.
func TestLoadIntoMySQL(t *testing.T) {
	dsn := os.Getenv("DPPROXY_TEST_MYSQL_DSN")
	if dsn == "" {
		t.Skip("DPPROXY_TEST_MYSQL_DSN is not set (scripts/test.sh sets it)")
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	ctx := t.Context()

	start := time.Now()
	if err := Load(ctx, db, "mysql"); err != nil {
		t.Fatal(err)
	}
	t.Logf("Load took %v", time.Since(start))

	// Count Adult's rows per sex and income in the file ...
	cols, next, err := Rows("adult")
	if err != nil {
		t.Fatal(err)
	}
	index := map[string]int{}
	for i, c := range cols {
		index[c.Name] = i
	}
	type key struct{ sex, income string }
	want := map[key]int{}
	for {
		row, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		want[key{row[index["sex"]].(string), row[index["income"]].(string)}]++
	}
	// ... and in the server.
	rows, err := db.QueryContext(ctx, "SELECT sex, income, COUNT(*) FROM adult GROUP BY sex, income")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[key]int{}
	for rows.Next() {
		var k key
		var n int
		if err := rows.Scan(&k.sex, &k.income, &n); err != nil {
			t.Fatal(err)
		}
		got[k] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || len(got) != len(want) {
		t.Fatalf("adult in MySQL has groups %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("adult %v: %d rows in MySQL, %d in the file", k, got[k], n)
		}
	}

	var pums, persons int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*), COUNT(DISTINCT pid) FROM pums").Scan(&pums, &persons); err != nil {
		t.Fatal(err)
	}
	if pums != 1948 || persons == 0 || persons >= pums {
		t.Errorf("pums in MySQL: %d rows, %d persons; want 1948 rows, several per person", pums, persons)
	}
}
