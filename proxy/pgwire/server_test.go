package pgwire

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

var passwords = map[string]string{"alice": alicePassword, "bob": bobPassword, "carol": carolPassword}

// dsn is a pgx connection string for userpass ("user:password").
func dsn(s *Server, userpass, extra string) string {
	return fmt.Sprintf("postgres://%s@%s/demo?%s", userpass, s.Addr(), extra)
}

// connect opens a pgx connection that is closed with the test.
func connect(t *testing.T, s *Server, userpass, extra string) *pgx.Conn {
	t.Helper()
	if extra == "" {
		extra = "sslmode=disable"
	}
	c, err := pgx.Connect(context.Background(), dsn(s, userpass, extra))
	if err != nil {
		t.Fatalf("connect %s: %v", userpass, err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func connectMode(t *testing.T, s *Server, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn(s, "alice:"+alicePassword, "sslmode=disable&application_name=tests"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	c, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("connect in mode %v: %v", mode, err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// wantState checks that err is a PostgreSQL error with SQLSTATE state.
func wantState(t *testing.T, err error, state string) *pgconn.PgError {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("want SQLSTATE %s, got %v", state, err)
	}
	if pe.Code != state {
		t.Fatalf("want SQLSTATE %s, got %s (%s)", state, pe.Code, pe.Message)
	}
	return pe
}

var allModes = []pgx.QueryExecMode{
	pgx.QueryExecModeCacheStatement,
	pgx.QueryExecModeCacheDescribe,
	pgx.QueryExecModeDescribeExec,
	pgx.QueryExecModeExec,
	pgx.QueryExecModeSimpleProtocol,
}

// TestResultsInEveryMode reads every column type in every pgx mode: text
// results (simple protocol, unknown columns) and binary ones (pgx asks for
// binary when a statement's description names int8, float8, date,
// timestamp).
func TestResultsInEveryMode(t *testing.T) {
	s, _ := startServer(t)
	ctx := context.Background()
	for _, mode := range allModes {
		for _, sql := range []string{"select mixed", "select known"} {
			t.Run(fmt.Sprintf("%v/%s", mode, sql), func(t *testing.T) {
				c := connectMode(t, s, mode)
				rows, err := c.Query(ctx, sql)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				fields := rows.FieldDescriptions()
				wantOIDs := []uint32{oidInt8, oidFloat8, oidText, oidDate, oidTimestamp, oidText}
				for i, f := range fields {
					if f.DataTypeOID != wantOIDs[i] {
						t.Errorf("column %s: OID %d, want %d", f.Name, f.DataTypeOID, wantOIDs[i])
					}
				}
				if !rows.Next() {
					t.Fatalf("no row: %v", rows.Err())
				}
				var (
					i     int64
					f     float64
					str   string
					d, ts time.Time
					n     *string
				)
				if err := rows.Scan(&i, &f, &str, &d, &ts, &n); err != nil {
					t.Fatal(err)
				}
				wantTS := time.Date(2024, 2, 29, 13, 14, 15, 5e8, time.UTC)
				if i != -42 || f != 1234567 || str != "héllo" || !d.Equal(time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)) || !ts.Equal(wantTS) || n != nil {
					t.Fatalf("got %d %v %q %v %v %v", i, f, str, d, ts, n)
				}
				if !rows.Next() {
					t.Fatalf("no second row: %v", rows.Err())
				}
				vals, err := rows.Values()
				if err != nil {
					t.Fatal(err)
				}
				for j, v := range vals {
					if v != nil {
						t.Errorf("column %d of the NULL row is %v", j, v)
					}
				}
				if rows.Next() {
					t.Fatal("a third row")
				}
				rows.Close()
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				if tag := rows.CommandTag().String(); tag != "SELECT 2" {
					t.Fatalf("tag %q", tag)
				}
			})
		}
	}
}

// TestParameters sends parameters of the common types in text (simple
// protocol, described as text) and binary (pgx's exec mode, which declares
// the types in Parse) and checks what the engine receives.
func TestParameters(t *testing.T) {
	s, e := startServer(t)
	ctx := context.Background()
	date := time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)
	ts := time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC)
	args := []any{int64(7), int32(-3), int16(2), 2.5, float32(0.25), "x'y", true, date, ts, nil}
	sql := "select args" + strings.Repeat(" $", len(args))

	want := map[pgx.QueryExecMode][]string{
		// Unspecified types (pgx declares none; dpproxy describes them as
		// unspecified): pgx sends text and the engine gets the text.
		pgx.QueryExecModeExec: {"string 7", "string -3", "string 2", "string 2.5", "string 0.25", "string x'y", "string t",
			"string 2024-02-29 00:00:00Z", "string 2024-02-29 13:14:15.123456Z", "<nil> <nil>"},
		pgx.QueryExecModeCacheStatement: {"string 7", "string -3", "string 2", "string 2.5", "string 0.25", "string x'y", "string t",
			"string 2024-02-29 00:00:00Z", "string 2024-02-29 13:14:15.123456Z", "<nil> <nil>"},
	}
	for mode, want := range want {
		t.Run(mode.String(), func(t *testing.T) {
			c := connectMode(t, s, mode)
			rows, err := c.Query(ctx, sql, args...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if i >= len(got) || !strings.HasPrefix(got[i], want[i]) {
					t.Fatalf("parameters reached the engine as\n%q\nwant\n%q", got, want)
				}
			}
		})
	}
	if _, _, received, _ := e.snapshot(); len(received) == 0 {
		t.Fatal("the engine saw nothing")
	}
}

func TestErrorsMapToSQLSTATE(t *testing.T) {
	s, _ := startServer(t)
	want := map[string]string{
		"syntax": "42601", "unsupported": "0A000", "refused": "42501", "budget": SQLStateBudget,
		"table": "42P01", "column": "42703", "db": "3D000", "permission": "42501", "value": "22023",
		"backend": "58000", "timeout": "57014", "auth": "28P01", "conns": "53300", "canceled": "57014",
		"internal": "XX000", "plain": "XX000",
	}
	for _, mode := range allModes {
		c := connectMode(t, s, mode)
		for name, state := range want {
			// With a parameter, pgx uses the extended protocol where the
			// mode says so; the error comes at Execute.
			_, err := c.Exec(context.Background(), "error "+name+" $1", 1)
			pe := wantState(t, err, state)
			if name != "plain" && pe.Message != "failed: "+name {
				t.Errorf("%s: message %q", name, pe.Message)
			}
			if pe.Severity != "ERROR" {
				t.Errorf("%s: severity %q", name, pe.Severity)
			}
		}
		_, err := c.Exec(context.Background(), "error prepare $1", 1)
		wantState(t, err, stateSyntax)
		if err := c.Ping(context.Background()); err != nil {
			t.Fatalf("connection unusable after errors: %v", err)
		}
	}
}

func TestAuthentication(t *testing.T) {
	s, e := startServer(t)
	ctx := context.Background()
	for _, user := range []string{"alice", "bob"} {
		c := connect(t, s, user+":"+passwords[user], "")
		if err := c.Ping(ctx); err != nil {
			t.Fatalf("%s: %v", user, err)
		}
		if got := c.PgConn().ParameterStatus("session_authorization"); got != user {
			t.Fatalf("session_authorization %q", got)
		}
	}
	_, err := pgx.Connect(ctx, dsn(s, "alice:wrong", "sslmode=disable"))
	wrong := wantState(t, err, stateInvalidPassword)
	_, err = pgx.Connect(ctx, dsn(s, "mallory:wrong", "sslmode=disable"))
	unknown := wantState(t, err, stateInvalidPassword)
	if strings.ReplaceAll(unknown.Message, "mallory", "alice") != wrong.Message || unknown.Severity != "FATAL" {
		t.Fatalf("an unknown user is told apart: %q vs %q", unknown.Message, wrong.Message)
	}
	if opened, _, _, _ := e.snapshot(); len(opened) != 2 {
		t.Fatalf("sessions opened: %v", opened)
	}
}

func TestStartupParameters(t *testing.T) {
	s, e := startServer(t, func(c *Config) { c.ServerVersion = "16.4 (test)" })
	c := connectMode(t, s, pgx.QueryExecModeCacheStatement)
	pc := c.PgConn()
	for name, want := range map[string]string{
		"server_version": "16.4 (test)", "client_encoding": "UTF8", "server_encoding": "UTF8",
		"DateStyle": "ISO, MDY", "integer_datetimes": "on", "standard_conforming_strings": "on",
		"TimeZone": "UTC", "application_name": "tests", "is_superuser": "off",
	} {
		if got := pc.ParameterStatus(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if pc.PID() == 0 || len(pc.SecretKey()) != 4 {
		t.Errorf("BackendKeyData: pid %d, key %x", pc.PID(), pc.SecretKey())
	}
	if opened, _, _, _ := e.snapshot(); len(opened) != 1 || opened[0] != "alice/demo/tests" {
		t.Fatalf("Open got %v", opened)
	}
	_, err := pgx.Connect(context.Background(), fmt.Sprintf("postgres://alice:%s@%s/nope?sslmode=disable", alicePassword, s.Addr()))
	wantState(t, err, stateInvalidCatalog)
}

// TestBatchErrorThenRecovery: an error inside a pipeline skips the rest up
// to Sync; the connection is fine afterwards.
func TestBatchErrorThenRecovery(t *testing.T) {
	s, e := startServer(t)
	ctx := context.Background()
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec} {
		t.Run(mode.String(), func(t *testing.T) {
			c := connectMode(t, s, mode)
			b := &pgx.Batch{}
			b.Queue("select 1")
			b.Queue("select args $1", 5)
			br := c.SendBatch(ctx, b)
			var n int64
			if err := br.QueryRow().Scan(&n); err != nil || n != 1 {
				t.Fatalf("first: %d, %v", n, err)
			}
			var arg string
			if err := br.QueryRow().Scan(&arg); err != nil || arg != "string 5" {
				t.Fatalf("second: %q, %v", arg, err)
			}
			br.Close()

			// Now an error in the middle.
			_, _, before, _ := e.snapshot()
			b = &pgx.Batch{}
			b.Queue("select 1")
			b.Queue("error refused $1", 1)
			b.Queue("select many")
			br = c.SendBatch(ctx, b)
			if _, err := br.Exec(); err != nil {
				t.Fatalf("first: %v", err)
			}
			_, err := br.Exec()
			wantState(t, err, stateInsufficientPriv)
			if _, err := br.Exec(); err == nil {
				t.Fatal("the statement after the error ran")
			}
			br.Close()
			_, _, after, _ := e.snapshot()
			for _, sql := range after[len(before):] {
				if sql == "select many" {
					t.Fatalf("the engine ran %q after the error in the batch", sql)
				}
			}
			if err := c.QueryRow(ctx, "select 1").Scan(&n); err != nil || n != 1 {
				t.Fatalf("after the batch: %d, %v", n, err)
			}
		})
	}
}

func TestCancelRequest(t *testing.T) {
	s, e := startServer(t)
	e.started = make(chan struct{}, 1)
	c := connect(t, s, "alice:"+alicePassword, "")
	ctx := context.Background()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Exec(ctx, "sleep")
		errc <- err
	}()
	<-e.started
	// A wrong key is ignored.
	other := connect(t, s, "bob:"+bobPassword, "")
	_ = other // its key differs; cancel c with the right one.
	if err := c.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		pe := wantState(t, err, stateQueryCanceled)
		if !strings.Contains(pe.Message, "user request") {
			t.Fatalf("message %q", pe.Message)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the statement was not cancelled")
	}
	var n int64
	if err := c.QueryRow(ctx, "select 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("after cancel: %d, %v", n, err)
	}
}

func TestCancelRequestWrongKey(t *testing.T) {
	s, e := startServer(t, func(c *Config) { c.QueryTimeout = 300 * time.Millisecond })
	e.started = make(chan struct{}, 1)
	c := connect(t, s, "alice:"+alicePassword, "")
	errc := make(chan error, 1)
	go func() {
		_, err := c.Exec(context.Background(), "sleep")
		errc <- err
	}()
	<-e.started
	s.cancelRequest(c.PgConn().PID(), []byte{0, 0, 0, 0})
	s.cancelRequest(c.PgConn().PID()+1000, c.PgConn().SecretKey())
	pe := wantState(t, <-errc, stateQueryCanceled)
	if !strings.Contains(pe.Message, "statement timeout") {
		t.Fatalf("a wrong key cancelled the statement: %q", pe.Message)
	}
}

func TestMaxConnections(t *testing.T) {
	s, _ := startServer(t, func(c *Config) { c.MaxConnections = 1 })
	ctx := context.Background()
	first, err := pgx.Connect(ctx, dsn(s, "alice:"+alicePassword, "sslmode=disable"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = pgx.Connect(ctx, dsn(s, "bob:"+bobPassword, "sslmode=disable"))
	wantState(t, err, stateTooManyConns)
	first.Close(ctx)
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := pgx.Connect(ctx, dsn(s, "bob:"+bobPassword, "sslmode=disable"))
		if err == nil {
			c.Close(ctx)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot not released: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOversizedMessage: after authentication a message over the limit is
// dropped unread and answered with 54000, in both protocols, and the
// connection goes on.
func TestOversizedMessage(t *testing.T) {
	s, e := startServer(t, func(c *Config) { c.MaxMessageBytes = 1024 })
	big := "select " + strings.Repeat("x", 2000)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		c := connectMode(t, s, mode)
		_, err := c.Exec(context.Background(), big)
		wantState(t, err, stateProgramLimit)
		var n int64
		if err := c.QueryRow(context.Background(), "select 1").Scan(&n); err != nil || n != 1 {
			t.Fatalf("%v: the connection did not survive: %d, %v", mode, n, err)
		}
	}
	_, _, received, _ := e.snapshot()
	for _, sql := range received {
		if strings.Contains(sql, "xxx") {
			t.Fatal("the engine received the oversized statement")
		}
	}
}

func TestPanicIsRecovered(t *testing.T) {
	s, _ := startServer(t)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		c := connectMode(t, s, mode)
		_, err := c.Exec(context.Background(), "panic")
		wantState(t, err, stateInternal)
		var n int64
		if err := c.QueryRow(context.Background(), "select 1").Scan(&n); err != nil || n != 1 {
			t.Fatalf("%v after a panic: %d, %v", mode, n, err)
		}
	}
}

func TestQueryTimeout(t *testing.T) {
	s, _ := startServer(t, func(c *Config) { c.QueryTimeout = 50 * time.Millisecond })
	c := connect(t, s, "alice:"+alicePassword, "")
	_, err := c.Exec(context.Background(), "sleep")
	pe := wantState(t, err, stateQueryCanceled)
	if !strings.Contains(pe.Message, "statement timeout") {
		t.Fatalf("message %q", pe.Message)
	}
}

func TestIdleTimeout(t *testing.T) {
	s, _ := startServer(t, func(c *Config) { c.IdleTimeout = 100 * time.Millisecond })
	c := connect(t, s, "alice:"+alicePassword, "")
	time.Sleep(400 * time.Millisecond)
	if err := c.Ping(context.Background()); err == nil {
		t.Fatal("an idle connection stayed open")
	}
}

func TestTransactionStatusAndTags(t *testing.T) {
	s, _ := startServer(t)
	c := connectMode(t, s, pgx.QueryExecModeSimpleProtocol)
	ctx := context.Background()
	for _, step := range []struct {
		sql, tag string
		status   byte
	}{
		{"begin", "BEGIN", 'T'},
		{"set x", "SET", 'T'},
		{"select many", "SELECT 10", 'T'},
		{"commit", "COMMIT", 'I'},
		{"-- ping", "", 'I'}, // no statement: EmptyQueryResponse, as PostgreSQL answers pgx's Ping
	} {
		tag, err := c.Exec(ctx, step.sql)
		if err != nil {
			t.Fatal(err)
		}
		if tag.String() != step.tag || c.PgConn().TxStatus() != step.status {
			t.Fatalf("%s: tag %q status %c", step.sql, tag, c.PgConn().TxStatus())
		}
	}
}

func TestNotice(t *testing.T) {
	s, _ := startServer(t)
	cfg, err := pgx.ParseConfig(dsn(s, "alice:"+alicePassword, "sslmode=disable"))
	if err != nil {
		t.Fatal(err)
	}
	var notices []string
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		notices = append(notices, n.Severity+" "+n.Code+" "+n.Message)
	}
	c, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var f float64
	if err := c.QueryRow(context.Background(), "warn").Scan(&f); err != nil || f != 12.5 {
		t.Fatalf("%v %v", f, err)
	}
	if len(notices) != 1 || notices[0] != "WARNING 01000 noisy" {
		t.Fatalf("notices %q", notices)
	}
}

func TestBadRowIsAnError(t *testing.T) {
	s, _ := startServer(t)
	c := connect(t, s, "alice:"+alicePassword, "")
	_, err := c.Exec(context.Background(), "bad row")
	wantState(t, err, stateInternal)
	if err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestCloseEndsConnections(t *testing.T) {
	s, e := startServer(t)
	e.started = make(chan struct{}, 1)
	c := connect(t, s, "alice:"+alicePassword, "")
	errc := make(chan error, 1)
	go func() {
		_, err := c.Exec(context.Background(), "sleep")
		errc <- err
	}()
	<-e.started
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err == nil {
		t.Fatal("the statement survived Close")
	}
	if _, closed, _, _ := e.snapshot(); closed != 1 {
		t.Fatalf("sessions closed: %d", closed)
	}
}
