package sampledata

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

func openSQLite(t *testing.T) *sql.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sample.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestLoadIntoSQLite(t *testing.T) {
	ctx := t.Context()
	db := openSQLite(t)

	start := time.Now()
	if err := Load(ctx, db, "sqlite"); err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded in %v", time.Since(start))

	for table, want := range map[string]int{"adult": 32561, "pums": 1948, "pums_person": 1000} {
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Errorf("%s has %d rows, want %d", table, n, want)
		}
	}

	var (
		age                    int64
		workclass, sex, income string
	)
	err := db.QueryRowContext(ctx, "SELECT age, workclass, sex, income FROM adult WHERE rowid = 1").
		Scan(&age, &workclass, &sex, &income)
	if err != nil {
		t.Fatal(err)
	}
	if age != 39 || workclass != "State-gov" || sex != "Male" || income != "<=50K" {
		t.Errorf("first adult row = %d %q %q %q, want 39 State-gov Male <=50K", age, workclass, sex, income)
	}
	var sumIncome, persons int64
	if err := db.QueryRowContext(ctx, "SELECT SUM(income), COUNT(DISTINCT pid) FROM pums").Scan(&sumIncome, &persons); err != nil {
		t.Fatal(err)
	}
	if sumIncome <= 0 || persons <= 0 || persons >= 1948 {
		t.Errorf("pums: SUM(income) = %d, distinct pid = %d; want a positive sum and several rows per person", sumIncome, persons)
	}

	// A second Load finds both tables complete and changes nothing.
	if err := Load(ctx, db, "sqlite"); err != nil {
		t.Fatalf("reload: %v", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM adult").Scan(&n); err != nil || n != 32561 {
		t.Errorf("after reload adult has %d rows (%v), want 32561", n, err)
	}
}

func TestLoadRefusesATableWithOtherRows(t *testing.T) {
	ctx := t.Context()
	db := openSQLite(t)
	if _, err := db.ExecContext(ctx, "CREATE TABLE pums (age INTEGER)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO pums VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	err := Load(ctx, db, "sqlite")
	if err == nil || !strings.Contains(err.Error(), "pums") || !strings.Contains(err.Error(), "1 rows") {
		t.Fatalf("Load over a foreign pums table: error = %v, want one naming pums and its row count", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'adult'").Scan(&n); err != nil || n != 0 {
		t.Errorf("adult was created (%d, %v) although Load failed its checks", n, err)
	}
}

func TestCreateDropsAHalfLoadedTable(t *testing.T) {
	ctx := t.Context()
	db := openSQLite(t)
	// A row count the file does not have makes the insert fail after every
	// batch went in, just before the commit.
	var pums Table
	for _, tb := range Tables() {
		if tb.Name == "pums" {
			pums = tb
		}
	}
	pums.RowCount = 5
	err := create(ctx, db, dialects["sqlite"], pums)
	if err == nil || !strings.Contains(err.Error(), "loaded 1948 rows into pums, want 5") {
		t.Fatalf("create error = %v", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'pums'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Error("the half-loaded pums table was left behind")
	}
}

func TestLoadRejectsUnknownDialect(t *testing.T) {
	if err := Load(t.Context(), openSQLite(t), "oracle"); err == nil || !strings.Contains(err.Error(), "oracle") {
		t.Errorf("Load(oracle) error = %v", err)
	}
}

func TestStatementsPerDialect(t *testing.T) {
	tb := Table{Name: "t", Columns: []Column{{"a", TypeInt}, {"b", TypeString}, {"c", TypeFloat}}}
	tests := []struct {
		dialect, create, insert string
	}{
		{"mysql",
			"CREATE TABLE `t` (`a` BIGINT NOT NULL, `b` VARCHAR(64) NOT NULL, `c` DOUBLE NOT NULL)",
			"INSERT INTO `t` (`a`, `b`, `c`) VALUES (?, ?, ?), (?, ?, ?)"},
		{"postgres",
			`CREATE TABLE "t" ("a" BIGINT NOT NULL, "b" TEXT NOT NULL, "c" DOUBLE PRECISION NOT NULL)`,
			`INSERT INTO "t" ("a", "b", "c") VALUES ($1, $2, $3), ($4, $5, $6)`},
		{"sqlite",
			`CREATE TABLE "t" ("a" INTEGER NOT NULL, "b" TEXT NOT NULL, "c" REAL NOT NULL)`,
			`INSERT INTO "t" ("a", "b", "c") VALUES (?, ?, ?), (?, ?, ?)`},
	}
	for _, tt := range tests {
		d := dialects[tt.dialect]
		if got := createTable(d, tb); got != tt.create {
			t.Errorf("%s create:\n got %s\nwant %s", tt.dialect, got, tt.create)
		}
		if got := insertSQL(d, tb, 2); got != tt.insert {
			t.Errorf("%s insert:\n got %s\nwant %s", tt.dialect, got, tt.insert)
		}
	}
}
