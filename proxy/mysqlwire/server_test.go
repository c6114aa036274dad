package mysqlwire

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/proxy"
)

func TestQueryReturnsTypedColumns(t *testing.T) {
	s, _ := startServer(t, nil)
	db := openDB(t, s, "")

	rows, err := db.Query("select mixed")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ct := range types {
		got = append(got, ct.DatabaseTypeName())
	}
	want := []string{"BIGINT", "DOUBLE", "VARCHAR", "NULL", "DATE", "DATETIME"}
	if !slices.Equal(got, want) {
		t.Errorf("column types = %v, want %v", got, want)
	}

	var (
		i      sql.NullInt64
		f      sql.NullFloat64
		str, d sql.NullString
		n      any
		dt     sql.NullString
	)
	if !rows.Next() {
		t.Fatal("no first row")
	}
	if err := rows.Scan(&i, &f, &str, &n, &d, &dt); err != nil {
		t.Fatal(err)
	}
	if i.Int64 != -42 || f.Float64 != 1234567.25 || str.String != "héllo" || n != nil || d.String != "2024-02-29" || dt.String != "2024-02-29 13:14:15" {
		t.Errorf("row 1 = %v %v %q %v %q %q", i, f, str.String, n, d.String, dt.String)
	}
	if !rows.Next() {
		t.Fatal("no second row")
	}
	if err := rows.Scan(&i, &f, &str, &n, &d, &dt); err != nil {
		t.Fatal(err)
	}
	if i.Valid || f.Valid || str.Valid || n != nil || d.Valid || dt.Valid {
		t.Errorf("row 2 should be all NULL: %v %v %v %v %v %v", i, f, str, n, d, dt)
	}
	if rows.Next() {
		t.Error("more than two rows")
	}
}

func TestOKResultCarriesAffectedRows(t *testing.T) {
	s, _ := startServer(t, nil)
	db := openDB(t, s, "")
	res, err := db.Exec("insert")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 3 {
		t.Errorf("RowsAffected = %d, %v; want 3", n, err)
	}
}

func TestPreparedStatementWithArgs(t *testing.T) {
	s, e := startServer(t, nil)
	db := openDB(t, s, "")

	var (
		i  int64
		st string
		f  float64
		n  sql.NullString
	)
	err := db.QueryRow("select ?, ?, ?, ?", 7, "two", 2.5, nil).Scan(&i, &st, &f, &n)
	if err != nil {
		t.Fatal(err)
	}
	if i != 7 || st != "two" || f != 2.5 || n.Valid {
		t.Errorf("echoed %v %q %v %v", i, st, f, n)
	}
	_, _, received, args := e.snapshot()
	if !slices.Contains(received, "select ?, ?, ?, ?") {
		t.Errorf("engine never saw the prepared statement: %q", received)
	}
	want := []proxy.Value{int64(7), "two", 2.5, nil}
	if len(args) != 1 || !slices.Equal(args[0], want) {
		t.Errorf("engine got args %#v, want %#v", args, want)
	}
}

func TestPreparedStatementBinaryTypes(t *testing.T) {
	s, _ := startServer(t, nil)
	// Without a placeholder go-sql-driver would use COM_QUERY; ask for a
	// server-side statement explicitly to get the binary protocol.
	db := openDB(t, s, "")
	stmt, err := db.Prepare("select mixed")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	var (
		i    int64
		f    float64
		str  string
		n    any
		d    string
		dt   string
		rows = 0
	)
	r, err := stmt.Query()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
		rows++
		if rows == 1 {
			if err := r.Scan(&i, &f, &str, &n, &d, &dt); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if rows != 2 || i != -42 || f != 1234567.25 || str != "héllo" || n != nil || d != "2024-02-29" || dt != "2024-02-29 13:14:15" {
		t.Errorf("binary row: %d rows, %v %v %q %v %q %q", rows, i, f, str, n, d, dt)
	}
}

func TestEngineErrorsReachTheClient(t *testing.T) {
	s, _ := startServer(t, nil)
	db := openDB(t, s, "")
	cases := []struct {
		stmt  string
		num   uint16
		state string
	}{
		{"error syntax", 1064, "42000"},
		{"error unsupported", 1235, "42000"},
		{"error refused", 1227, "42000"},
		{"error budget", 1227, "DP001"},
		{"error table", 1146, "42S02"},
		{"error column", 1054, "42S22"},
		{"error db", 1049, "42000"},
		{"error permission", 1227, "42000"},
		{"error value", 1231, "42000"},
		{"error backend", 1105, "HY000"},
		{"error timeout", 3024, "HY000"},
		{"error auth", 1045, "28000"},
		{"error conns", 1040, "08004"},
		{"error canceled", 1317, "70100"},
		{"error internal", 1105, "HY000"},
		{"error plain", 1105, "HY000"},
	}
	for _, c := range cases {
		t.Run(c.stmt, func(t *testing.T) {
			_, err := db.Exec(c.stmt)
			var me *mysql.MySQLError
			if !errors.As(err, &me) {
				t.Fatalf("got %v, want a MySQL error", err)
			}
			if me.Number != c.num || string(me.SQLState[:]) != c.state {
				t.Errorf("got %d (%s), want %d (%s)", me.Number, me.SQLState, c.num, c.state)
			}
			name := strings.TrimPrefix(c.stmt, "error ")
			if name != "plain" && me.Message != "failed: "+name {
				t.Errorf("message %q, want the engine's", me.Message)
			}
		})
	}
}

func TestMultiStatementTextReachesEngineWhole(t *testing.T) {
	s, e := startServer(t, nil)
	d, err := sql.Open("mysql", dsn(s, "alice", testPassword, "", map[string]string{"multiStatements": "true"}))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const text = "select 1; select 'a;b'"
	_, err = d.Exec(text)
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1064 {
		t.Fatalf("got %v, want the engine's syntax error", err)
	}
	_, _, received, _ := e.snapshot()
	if !slices.Contains(received, text) {
		t.Errorf("engine got %q, want the whole text once", received)
	}
}

func TestHandshakeDatabaseOpensSession(t *testing.T) {
	s, e := startServer(t, nil)
	db := openDB(t, s, "shop`x")
	var got string
	if err := db.QueryRow("select database()").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "shop`x" {
		t.Errorf("database() = %q", got)
	}
	opened, _, received, _ := e.snapshot()
	if !slices.Contains(opened, "alice/shop`x") {
		t.Errorf("Open calls %q, want alice/shop`x", opened)
	}
	for _, r := range received {
		if strings.HasPrefix(r, "use") {
			t.Errorf("the handshake database went to Execute as %q; Open should get it", r)
		}
	}
}

func TestUnknownDatabaseAtConnect(t *testing.T) {
	s, _ := startServer(t, nil)
	db := openDB(t, s, "nope")
	err := db.Ping()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1049 || string(me.SQLState[:]) != "42000" {
		t.Fatalf("got %v, want error 1049", err)
	}
}

func TestWrongPasswordIsAccessDenied(t *testing.T) {
	s, _ := startServer(t, nil)
	for _, user := range []string{"alice", "mallory"} {
		d, err := sql.Open("mysql", dsn(s, user, "wrong", "", nil))
		if err != nil {
			t.Fatal(err)
		}
		err = d.Ping()
		d.Close()
		var me *mysql.MySQLError
		if !errors.As(err, &me) {
			t.Fatalf("%s: got %v, want a MySQL error", user, err)
		}
		want := "Access denied for user '" + user + "'@'127.0.0.1' (using password: YES)"
		if me.Number != 1045 || string(me.SQLState[:]) != "28000" || me.Message != want {
			t.Errorf("%s: got %d (%s) %q, want 1045 (28000) %q", user, me.Number, me.SQLState, me.Message, want)
		}
	}
}

func TestMaxConnections(t *testing.T) {
	s, e := startServer(t, func(c *Config) { c.MaxConnections = 1 })
	first := openDB(t, s, "")
	conn, err := first.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	second := openDB(t, s, "")
	err = second.Ping()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1040 || string(me.SQLState[:]) != "08004" || me.Message != "Too many connections" {
		t.Fatalf("second connection: got %v, want 1040 Too many connections", err)
	}

	// Closing the first frees its slot.
	conn.Close()
	first.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if err = second.Ping(); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot never freed: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, closed, _, _ := e.snapshot(); closed < 1 {
		t.Error("the first connection's session was not closed")
	}
}

func TestPanicInSessionIsInternalError(t *testing.T) {
	s, _ := startServer(t, nil)
	db := openDB(t, s, "")
	db.SetMaxOpenConns(1)
	_, err := db.Exec("panic")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1105 || me.Message != "internal error" {
		t.Fatalf("got %v, want 1105 internal error", err)
	}
	// The same connection still works, and so does a new one.
	var one int
	if err := db.QueryRow("select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("same connection after panic: %v", err)
	}
	other := openDB(t, s, "")
	if err := other.QueryRow("select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("new connection after panic: %v", err)
	}
}

func TestQueryTimeout(t *testing.T) {
	s, _ := startServer(t, func(c *Config) { c.QueryTimeout = 50 * time.Millisecond })
	db := openDB(t, s, "")
	start := time.Now()
	_, err := db.Exec("sleep")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 3024 {
		t.Fatalf("got %v, want 3024", err)
	}
	if time.Since(start) > 3*time.Second {
		t.Errorf("timeout took %v", time.Since(start))
	}
}

func TestBadEngineResultIsAnError(t *testing.T) {
	s, _ := startServer(t, nil)
	db := openDB(t, s, "")
	_, err := db.Exec("bad row")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1105 || !strings.Contains(me.Message, "cannot send string as an integer") {
		t.Fatalf("got %v, want 1105 naming the bad value", err)
	}
}

func TestIdleConnectionIsClosed(t *testing.T) {
	s, e := startServer(t, func(c *Config) { c.IdleTimeout = 100 * time.Millisecond })
	db := openDB(t, s, "")
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, closed, _, _ := e.snapshot(); closed == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the idle connection's session was never closed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCloseEndsSessions(t *testing.T) {
	s, e := startServer(t, nil)
	db := openDB(t, s, "")
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	opened, closed, _, _ := e.snapshot()
	if len(opened) != 1 || closed != 1 {
		t.Errorf("after Close: %d opened, %d closed", len(opened), closed)
	}
	if err := db.Ping(); err == nil {
		t.Error("ping succeeded after Close")
	}
}

func TestOpenFailureIsReported(t *testing.T) {
	s, _ := startServer(t, func(c *Config) {
		c.Open = func(context.Context, string, string) (Session, error) {
			return nil, proxy.Errorf(proxy.CodeBackend, "backend unreachable")
		}
	})
	db := openDB(t, s, "")
	_, err := db.Exec("select 1")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1105 || me.Message != "backend unreachable" {
		t.Fatalf("got %v, want 1105 backend unreachable", err)
	}
}

// The engine's session is what Config.Open hands out.
var _ Session = (*proxy.Session)(nil)
