package parser

import (
	"strings"
	"testing"
)

func TestPGSet(t *testing.T) {
	session := func(name string, v Expr) *Set {
		return &Set{Assignments: []Assignment{{Name: name, Scope: ScopeSession, Value: v}}}
	}
	tests := []struct {
		sql  string
		want Statement
	}{
		{"SET dp_epsilon = 0.5", session("dp_epsilon", dec(0.5, "0.5"))},
		{"SET dp_mechanism TO 'gaussian'", session("dp_mechanism", lit("gaussian"))},
		{"SET SESSION extra_float_digits = 3", session("extra_float_digits", lit(int64(3)))},
		{"SET LOCAL statement_timeout = '5s'", session("statement_timeout", lit("5s"))},
		{"SET application_name = 'PostgreSQL JDBC Driver'", session("application_name", lit("PostgreSQL JDBC Driver"))},
		{"SET client_encoding TO 'UTF8'", session("client_encoding", lit("UTF8"))},
		{"SET NAMES 'UTF8'", session("client_encoding", lit("UTF8"))},
		// Bare words are identifiers, folded to lower case by the grammar.
		{"SET DateStyle = ISO, MDY", session("datestyle", lit("iso, mdy"))},
		{"SET TIME ZONE 'UTC'", session("timezone", lit("UTC"))},
		{"SET TimeZone = 'Europe/Zurich'", session("timezone", lit("Europe/Zurich"))},
		{"SET search_path TO public", session("search_path", lit("public"))},
		{`SET search_path = "$user", public`, session("search_path", lit("$user, public"))},
		{"SET SCHEMA 'census'", session("search_path", lit("census"))},
		{"SET standard_conforming_strings = on", session("standard_conforming_strings", lit("on"))},
		{"SET x = true", session("x", lit("true"))},
		{"SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED", session("transaction_isolation", lit("read committed"))},
		{"SET TRANSACTION READ ONLY", session("transaction_read_only", lit(int64(1)))},
		{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ WRITE", &Set{Assignments: []Assignment{
			{Name: "transaction_isolation", Scope: ScopeSession, Value: lit("serializable")},
			{Name: "transaction_read_only", Scope: ScopeSession, Value: lit(int64(0))}}}},

		{"RESET search_path", &Reset{Name: "search_path"}},
		{"RESET ALL", &Reset{Name: "all"}},
		{"SET dp_epsilon TO DEFAULT", &Reset{Name: "dp_epsilon"}},
		{"SET TIME ZONE LOCAL", &Reset{Name: "timezone"}},
	}
	for _, tt := range tests {
		stmt, _ := mustParsePG(t, tt.sql)
		checkModel(t, tt.sql, stmt, tt.want)
	}
}

func TestPGShow(t *testing.T) {
	tests := []struct{ sql, name string }{
		{"SHOW standard_conforming_strings", "standard_conforming_strings"},
		{"show TimeZone", "timezone"},
		{"SHOW TIME ZONE", "timezone"},
		{"SHOW TRANSACTION ISOLATION LEVEL", "transaction_isolation"},
		{"SHOW server_version", "server_version"},
		{"SHOW search_path", "search_path"},
		{"SHOW ALL", "all"},
		{"SHOW dp_epsilon", "dp_epsilon"},
	}
	for _, tt := range tests {
		stmt, _ := mustParsePG(t, tt.sql)
		checkModel(t, tt.sql, stmt, &Show{Kind: ShowVariable, Name: tt.name})
	}
}

func TestPGOtherStatements(t *testing.T) {
	tests := []struct {
		sql  string
		want Statement
	}{
		{"BEGIN", &Transaction{Kind: TxBegin}},
		{"BEGIN ISOLATION LEVEL REPEATABLE READ", &Transaction{Kind: TxBegin}},
		{"START TRANSACTION READ ONLY", &Transaction{Kind: TxBegin}},
		{"COMMIT", &Transaction{Kind: TxCommit}},
		{"END", &Transaction{Kind: TxCommit}},
		{"ROLLBACK", &Transaction{Kind: TxRollback}},
		{"ABORT", &Transaction{Kind: TxRollback}},
		{"DISCARD ALL", &Discard{What: "all"}},
		{"DISCARD PLANS", &Discard{What: "plans"}},
		{"DEALLOCATE s1", &Deallocate{Name: "s1"}},
		{"DEALLOCATE PREPARE ALL", &Deallocate{All: true}},
		{"EXPLAIN SELECT 1", &Explain{Stmt: pgSel1(lit(int64(1)), "1", "?column?")}},
		{"EXPLAIN (FORMAT JSON, ANALYZE false) SELECT 1", &Explain{Stmt: pgSel1(lit(int64(1)), "1", "?column?")}},
		{"", &Empty{}},
		{";", &Empty{}},
		{"  /* only a comment */ ", &Empty{}},
		{"-- a line comment\n", &Empty{}},
		{"SHOW PRIVACY BUDGET", &ShowPrivacyBudget{}},
		{"show privacy budget for user alice", &ShowPrivacyBudget{User: "alice"}},

		{"INSERT INTO t VALUES (1)", &Write{Verb: "INSERT"}},
		{"UPDATE t SET a = 1", &Write{Verb: "UPDATE"}},
		{"DELETE FROM t", &Write{Verb: "DELETE"}},
		{"MERGE INTO t USING u ON t.id = u.id WHEN MATCHED THEN DELETE", &Write{Verb: "MERGE"}},
		{"COPY t TO STDOUT", &Write{Verb: "COPY"}},
		{"CREATE TABLE t (a int)", &Write{Verb: "CREATE TABLE"}},
		{"CREATE TABLE t2 AS SELECT * FROM t", &Write{Verb: "CREATE TABLE AS"}},
		{"CREATE MATERIALIZED VIEW m AS SELECT 1", &Write{Verb: "CREATE MATERIALIZED VIEW"}},
		{"CREATE VIEW v AS SELECT 1", &Write{Verb: "CREATE VIEW"}},
		{"CREATE INDEX i ON t (a)", &Write{Verb: "CREATE INDEX"}},
		{"CREATE DATABASE d", &Write{Verb: "CREATE DATABASE"}},
		{"CREATE SCHEMA s", &Write{Verb: "CREATE SCHEMA"}},
		{"CREATE EXTENSION dblink", &Write{Verb: "CREATE EXTENSION"}},
		{"DROP TABLE t", &Write{Verb: "DROP TABLE"}},
		{"DROP MATERIALIZED VIEW m", &Write{Verb: "DROP MATERIALIZED VIEW"}},
		{"DROP FOREIGN TABLE f", &Write{Verb: "DROP FOREIGN TABLE"}},
		{"DROP DATABASE d", &Write{Verb: "DROP DATABASE"}},
		{"ALTER TABLE t ADD COLUMN b int", &Write{Verb: "ALTER TABLE"}},
		{"ALTER TABLE t RENAME TO u", &Write{Verb: "ALTER"}},
		{"ALTER DOMAIN d SET DEFAULT 1", &Write{Verb: "ALTER DOMAIN"}},
		{"TRUNCATE t", &Write{Verb: "TRUNCATE"}},
		{"GRANT SELECT ON t TO u", &Write{Verb: "GRANT"}},
		{"REVOKE SELECT ON t FROM u", &Write{Verb: "REVOKE"}},
		{"GRANT r TO u", &Write{Verb: "GRANT"}},
		{"VACUUM t", &Write{Verb: "VACUUM"}},
		{"ANALYZE t", &Write{Verb: "ANALYZE"}},
		{"CALL p()", &Write{Verb: "CALL"}},
		{"LOCK TABLE t", &Write{Verb: "LOCK TABLE"}},
		{"CREATE ROLE r", &Write{Verb: "CREATE ROLE"}},
		{"ALTER SYSTEM SET work_mem = '1GB'", &Write{Verb: "ALTER SYSTEM"}},
		{"EXPLAIN INSERT INTO t VALUES (1)", &Explain{Stmt: &Write{Verb: "INSERT"}}},
	}
	for _, tt := range tests {
		stmt, _ := mustParsePG(t, tt.sql)
		checkModel(t, tt.sql, stmt, tt.want)
	}
}

func TestPGUnsupportedStatements(t *testing.T) {
	tests := []struct{ sql, what string }{
		{"SELECT 1; SELECT 2", "multi-statements"},
		{"SET search_path = public; SELECT 1;", "multi-statements"},
		{"SET ROLE admin", "SET ROLE"},
		{"SET SESSION AUTHORIZATION alice", "SET SESSION AUTHORIZATION"},
		{"SET search_path FROM CURRENT", "SET ... FROM CURRENT"},
		{"SET TRANSACTION SNAPSHOT '0001'", "SET TRANSACTION SNAPSHOT"},
		{"EXPLAIN ANALYZE SELECT 1", "EXPLAIN ANALYZE"},
		{"EXPLAIN (ANALYZE) SELECT 1", "EXPLAIN ANALYZE"},
		{"SAVEPOINT s", "SAVEPOINT"},
		{"RELEASE SAVEPOINT s", "RELEASE SAVEPOINT"},
		{"ROLLBACK TO SAVEPOINT s", "ROLLBACK TO SAVEPOINT"},
		{"COMMIT AND CHAIN", "AND CHAIN"},
		{"PREPARE TRANSACTION 'x'", "two-phase commit (PREPARE TRANSACTION)"},
		{"PREPARE s AS SELECT 1", "PREPARE"},
		{"EXECUTE s", "EXECUTE"},
		{"DECLARE c CURSOR FOR SELECT 1", "DECLARE CURSOR"},
		{"FETCH c", "FETCH"},
		{"LISTEN ch", "LISTEN"},
		{"NOTIFY ch", "NOTIFY"},
		{"DO $$ BEGIN END $$", "DO"},
	}
	for _, tt := range tests {
		checkUnsupportedPG(t, tt.sql, tt.what)
	}
}

// TestPGSyntaxErrors checks that PostgreSQL's own message and its 1-based
// character position reach the client (psql draws its caret from it).
func TestPGSyntaxErrors(t *testing.T) {
	tests := []struct {
		sql string
		msg string
		pos int
	}{
		{"SELEC 1", `syntax error at or near "SELEC"`, 1},
		{"SELECT FROM WHERE", `syntax error at or near "WHERE"`, 13},
		{"SELECT 'unterminated", `unterminated quoted string at or near "'unterminated"`, 8},
		{"SELECT 1; garbage", `syntax error at or near "garbage"`, 11},
		// Positions count characters, not bytes.
		{"SELECT 'é', 'ü' FRM t", `syntax error at or near "t"`, 21},
		{"SELECT (1", `syntax error at end of input`, 10},
		{"SELECT 1\x00; DROP TABLE t", `invalid byte sequence for encoding "UTF8": 0x00`, 9},
		{"SELECT $0", "there is no parameter $0", 8},
	}
	for _, tt := range tests {
		_, _, err := Parse(tt.sql, PostgreSQL)
		syntax, ok := err.(*SyntaxError)
		if !ok {
			t.Errorf("Parse(%q) error = %v (%T), want *SyntaxError", tt.sql, err, err)
			continue
		}
		if syntax.Msg != tt.msg || syntax.Position != tt.pos {
			t.Errorf("Parse(%q) = %q at %d, want %q at %d", tt.sql, syntax.Msg, syntax.Position, tt.msg, tt.pos)
		}
	}
}

func TestPGFingerprint(t *testing.T) {
	same := [][2]string{
		{"SELECT COUNT(*) FROM t WHERE a = 1", "select count(*)  from t where a=2"},
		{"SELECT a FROM t WHERE b IN (1, 2, 3)", "SELECT a FROM t WHERE b IN (4, 5)"},
		{"SELECT 'x'", "/* c */ SELECT 'y'"},
		{"SELECT a FROM t WHERE b = $1", "SELECT a FROM t WHERE b = 7"},
	}
	for _, p := range same {
		if a, b := Fingerprint(p[0], PostgreSQL), Fingerprint(p[1], PostgreSQL); a != b {
			t.Errorf("Fingerprint(%q) = %q, Fingerprint(%q) = %q; want equal", p[0], a, p[1], b)
		}
	}
	if got := Fingerprint("SELECT SUM(x) FROM t WHERE a = 'secret'", PostgreSQL); strings.Contains(got, "secret") {
		t.Errorf("Fingerprint kept a literal: %q", got)
	}
	different := [][2]string{
		{"SELECT SUM(x) FROM t", "SELECT AVG(x) FROM t"},
		{"SELECT a FROM t", "SELECT a FROM u"},
		{"SELECT a FROM t WHERE b > 1", "SELECT a FROM t WHERE b < 1"},
	}
	for _, p := range different {
		if a, b := Fingerprint(p[0], PostgreSQL), Fingerprint(p[1], PostgreSQL); a == b {
			t.Errorf("Fingerprint(%q) = Fingerprint(%q) = %q; want different", p[0], p[1], a)
		}
	}
}

// A long operator chain overflowed libpg_query's C stack while it built
// the protobuf tree, killing the process (found while testing nesting
// limits): it must be refused before the C parser sees it, while nesting
// that the grammar itself limits stays a syntax error.
func TestPGDeepStatements(t *testing.T) {
	for _, chain := range []string{"+1", " UNION SELECT 1", " COLLATE \"C\"", "::int"} {
		sql := "SELECT 1" + strings.Repeat(chain, 30000)
		_, _, err := Parse(sql, PostgreSQL)
		if _, ok := err.(*UnsupportedError); !ok {
			t.Errorf("Parse(SELECT 1%s × 30000) error = %v (%T), want *UnsupportedError", chain, err, err)
		}
	}
	sql := "SELECT " + strings.Repeat("(", 30000) + "1" + strings.Repeat(")", 30000)
	if _, _, err := Parse(sql, PostgreSQL); err == nil {
		t.Errorf("Parse of 30000 nested parentheses succeeded")
	}
	// A long but flat statement is fine.
	list := strings.Repeat("1, ", 20000)
	if _, _, err := Parse("SELECT a FROM t WHERE a IN ("+list+"1)", PostgreSQL); err != nil {
		t.Errorf("Parse of a 20001-item IN list: %v", err)
	}
}
