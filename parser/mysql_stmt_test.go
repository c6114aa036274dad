package parser

import (
	"reflect"
	"strings"
	"sync"
	"testing"
)

func TestMySQLSet(t *testing.T) {
	session := func(name string, v Expr) Assignment { return Assignment{Name: name, Scope: ScopeSession, Value: v} }
	tests := []struct {
		sql  string
		want []Assignment
	}{
		{"SET dp_epsilon = 0.5", []Assignment{session("dp_epsilon", dec(0.5, "0.5"))}},
		{"SET dp_mechanism = 'gaussian'", []Assignment{session("dp_mechanism", lit("gaussian"))}},
		{"SET @@session.x = 1", []Assignment{session("x", lit(int64(1)))}},
		{"SET SESSION x = 1", []Assignment{session("x", lit(int64(1)))}},
		{"SET @@global.x = 1", []Assignment{{Name: "x", Scope: ScopeGlobal, Value: lit(int64(1))}}},
		{"SET GLOBAL x = 1", []Assignment{{Name: "x", Scope: ScopeGlobal, Value: lit(int64(1))}}},
		{"SET @a = 1", []Assignment{{Name: "a", Scope: ScopeUser, Value: lit(int64(1))}}},
		{"SET @a := 'x', b = 2", []Assignment{{Name: "a", Scope: ScopeUser, Value: lit("x")}, session("b", lit(int64(2)))}},
		{"SET autocommit=1", []Assignment{session("autocommit", lit(int64(1)))}},
		{"SET autocommit = ON", []Assignment{session("autocommit", lit("ON"))}},
		// A bare word is a value for a system variable.
		{"SET sql_mode = TRADITIONAL", []Assignment{session("sql_mode", lit("TRADITIONAL"))}},
		{"SET NAMES utf8mb4", []Assignment{session("names", lit("utf8mb4"))}},
		{"SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci", []Assignment{
			session("names", lit("utf8mb4")), session("collation_connection", lit("utf8mb4_unicode_ci"))}},
		{"/*!40101 SET NAMES utf8 */", []Assignment{session("names", lit("utf8"))}},
		{"SET CHARACTER SET utf8mb4", []Assignment{session("charset", lit("utf8mb4"))}},
		{"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", []Assignment{
			session("transaction_isolation", lit("READ-COMMITTED"))}},
		{"SET GLOBAL TRANSACTION ISOLATION LEVEL SERIALIZABLE", []Assignment{
			{Name: "transaction_isolation", Scope: ScopeGlobal, Value: lit("SERIALIZABLE")}}},
		{"SET TRANSACTION READ ONLY", []Assignment{session("transaction_read_only", lit("1"))}},
		{"SET sql_mode=concat(@@sql_mode,',STRICT_TRANS_TABLES')", []Assignment{
			session("sql_mode", fn("concat", sysvar("sql_mode"), lit(",STRICT_TRANS_TABLES")))}},
	}
	for _, tt := range tests {
		stmt, _ := mustParse(t, tt.sql)
		checkModel(t, tt.sql, stmt, &Set{Assignments: tt.want})
	}
}

func TestMySQLShow(t *testing.T) {
	tests := []struct {
		sql  string
		want *Show
	}{
		{"SHOW DATABASES", &Show{Kind: ShowDatabases}},
		{"SHOW SCHEMAS LIKE 'd%'", &Show{Kind: ShowDatabases, Like: "d%"}},
		{"SHOW TABLES", &Show{Kind: ShowTables}},
		{"SHOW FULL TABLES FROM db LIKE 't%'", &Show{Kind: ShowTables, Full: true, Schema: "db", Like: "t%"}},
		{"SHOW COLUMNS FROM t", &Show{Kind: ShowColumns, Table: "t"}},
		{"SHOW FULL COLUMNS FROM t FROM db", &Show{Kind: ShowColumns, Full: true, Table: "t", Schema: "db"}},
		{"SHOW FIELDS FROM db.t LIKE 'a%'", &Show{Kind: ShowColumns, Table: "t", Schema: "db", Like: "a%"}},
		{"DESCRIBE t", &Show{Kind: ShowColumns, Table: "t"}},
		{"DESC db.t", &Show{Kind: ShowColumns, Table: "t", Schema: "db"}},
		{"EXPLAIN t", &Show{Kind: ShowColumns, Table: "t"}},
		{"DESCRIBE t col", &Show{Kind: ShowColumns, Table: "t", Like: "col"}},
		{"SHOW VARIABLES LIKE 'sql_mode'", &Show{Kind: ShowVariables, Like: "sql_mode"}},
		{"SHOW VARIABLES LIKE 'lower_case_table_names'", &Show{Kind: ShowVariables, Like: "lower_case_table_names"}},
		{"SHOW GLOBAL VARIABLES", &Show{Kind: ShowVariables, Global: true}},
		{"SHOW SESSION VARIABLES WHERE Variable_name = 'x'", &Show{Kind: ShowVariables,
			Where: bin(OpEQ, col("Variable_name"), lit("x"))}},
		{"SHOW STATUS", &Show{Kind: ShowStatus}},
		{"SHOW GLOBAL STATUS LIKE 'Up%'", &Show{Kind: ShowStatus, Global: true, Like: "Up%"}},
		{"SHOW WARNINGS", &Show{Kind: ShowWarnings}},
		{"SHOW ERRORS", &Show{Kind: ShowErrors}},
		{"SHOW COLLATION", &Show{Kind: ShowCollation}},
		{"SHOW CHARACTER SET", &Show{Kind: ShowCharset}},
		{"SHOW CHARSET", &Show{Kind: ShowCharset}},
		{"SHOW CREATE TABLE db.t", &Show{Kind: ShowCreateTable, Schema: "db", Table: "t"}},
		{"SHOW TABLE STATUS FROM db LIKE 't'", &Show{Kind: ShowTableStatus, Schema: "db", Like: "t"}},
		{"SHOW INDEX FROM t FROM db", &Show{Kind: ShowIndex, Table: "t", Schema: "db"}},
		{"SHOW KEYS FROM t", &Show{Kind: ShowIndex, Table: "t"}},
		{"SHOW ENGINES", &Show{Kind: ShowEngines}},
		{"SHOW PROCESSLIST", &Show{Kind: ShowProcessList}},
		{"SHOW FULL PROCESSLIST", &Show{Kind: ShowProcessList, Full: true}},
		{"SHOW GRANTS", &Show{Kind: ShowGrants}},
		{"SHOW GRANTS FOR CURRENT_USER()", &Show{Kind: ShowGrants}},
		{"SHOW GRANTS FOR alice", &Show{Kind: ShowGrants, Name: "alice"}},
	}
	for _, tt := range tests {
		stmt, _ := mustParse(t, tt.sql)
		checkModel(t, tt.sql, stmt, tt.want)
	}
}

func TestMySQLOtherStatements(t *testing.T) {
	tests := []struct {
		sql  string
		want Statement
	}{
		{"USE db", &Use{DB: "db"}},
		{"USE `My DB`", &Use{DB: "My DB"}},
		{"BEGIN", &Transaction{Kind: TxBegin}},
		{"START TRANSACTION", &Transaction{Kind: TxBegin}},
		{"START TRANSACTION READ ONLY", &Transaction{Kind: TxBegin}},
		{"COMMIT", &Transaction{Kind: TxCommit}},
		{"ROLLBACK", &Transaction{Kind: TxRollback}},
		{"EXPLAIN SELECT 1", &Explain{Stmt: sel1(lit(int64(1)), "1")}},
		{"EXPLAIN FORMAT='json' SELECT 1", &Explain{Stmt: sel1(lit(int64(1)), "1")}},
		{"", &Empty{}},
		{";", &Empty{}},
		{"  /* only a comment */ ", &Empty{}},
		{"-- a line comment\n", &Empty{}},

		{"INSERT INTO t VALUES (1)", &Write{Verb: "INSERT"}},
		{"REPLACE INTO t VALUES (1)", &Write{Verb: "REPLACE"}},
		{"UPDATE t SET a = 1", &Write{Verb: "UPDATE"}},
		{"DELETE FROM t", &Write{Verb: "DELETE"}},
		{"CREATE TABLE t (a INT)", &Write{Verb: "CREATE TABLE"}},
		{"CREATE DATABASE d", &Write{Verb: "CREATE DATABASE"}},
		{"CREATE INDEX i ON t (a)", &Write{Verb: "CREATE INDEX"}},
		{"CREATE VIEW v AS SELECT 1", &Write{Verb: "CREATE VIEW"}},
		{"DROP TABLE t", &Write{Verb: "DROP TABLE"}},
		{"DROP DATABASE d", &Write{Verb: "DROP DATABASE"}},
		{"ALTER TABLE t ADD COLUMN b INT", &Write{Verb: "ALTER TABLE"}},
		{"TRUNCATE t", &Write{Verb: "TRUNCATE"}},
		{"RENAME TABLE a TO b", &Write{Verb: "RENAME TABLE"}},
		{"GRANT SELECT ON *.* TO u", &Write{Verb: "GRANT"}},
		{"REVOKE SELECT ON *.* FROM u", &Write{Verb: "REVOKE"}},
		{"LOAD DATA INFILE 'x' INTO TABLE t", &Write{Verb: "LOAD DATA"}},
		{"CALL p()", &Write{Verb: "CALL"}},
		{"LOCK TABLES t READ", &Write{Verb: "LOCK TABLES"}},
		{"UNLOCK TABLES", &Write{Verb: "UNLOCK TABLES"}},
		{"CREATE USER u", &Write{Verb: "CREATE USER"}},
		{"SET PASSWORD = 'x'", &Write{Verb: "SET PASSWORD"}},
		{"ANALYZE TABLE t", &Write{Verb: "ANALYZE TABLE"}},
		{"EXPLAIN INSERT INTO t VALUES (1)", &Explain{Stmt: &Write{Verb: "INSERT"}}},
	}
	for _, tt := range tests {
		stmt, _ := mustParse(t, tt.sql)
		checkModel(t, tt.sql, stmt, tt.want)
	}
}

func TestMySQLUnsupportedStatements(t *testing.T) {
	tests := []struct{ sql, what string }{
		{"SELECT 1; SELECT 2", "multi-statements"},
		{"SET NAMES utf8; SELECT 1;", "multi-statements"},
		{"DO 1", "DO"},
		{"KILL 5", "KILL"},
		{"PREPARE s FROM 'SELECT 1'", "PREPARE"},
		{"SET ROLE r", "SET ROLE"},
		{"SET x = DEFAULT", "SET ... = DEFAULT"},
		{"SHOW CREATE VIEW v", "SHOW CREATE VIEW"},
		{"SHOW TRIGGERS", "SHOW TRIGGERS"},
		{"SHOW COUNT(*) WARNINGS", "SHOW COUNT(*) WARNINGS/ERRORS"},
		{"EXPLAIN ANALYZE SELECT 1", "EXPLAIN ANALYZE"},
		{"ROLLBACK TO SAVEPOINT s", "ROLLBACK TO SAVEPOINT"},
		{"SAVEPOINT s", "SAVEPOINT"},
	}
	for _, tt := range tests {
		checkUnsupported(t, tt.sql, tt.what)
	}
}

func TestMySQLSyntaxErrors(t *testing.T) {
	tests := []struct{ sql, msg string }{
		{"SELEC 1", `You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use line 1 column 5 near "SELEC 1"`},
		{"SELECT FROM", "near"},
		{"SELECT 'unterminated", "near"},
		{"SELECT 1; garbage", "near"},
		{"SET NAMES no_such_charset", "Unknown character set: 'no_such_charset'"},
	}
	for _, tt := range tests {
		_, _, err := Parse(tt.sql, MySQL)
		syntax, ok := err.(*SyntaxError)
		if !ok {
			t.Errorf("Parse(%q) error = %v (%T), want *SyntaxError", tt.sql, err, err)
			continue
		}
		if !strings.Contains(syntax.Msg, tt.msg) {
			t.Errorf("Parse(%q) message %q does not contain %q", tt.sql, syntax.Msg, tt.msg)
		}
	}
}

// TestMySQLClientQueries checks what clients and drivers send on connect.
func TestMySQLClientQueries(t *testing.T) {
	as := func(e Expr, alias, text string) SelectItem { return SelectItem{Expr: e, Alias: alias, Text: text} }
	tests := []struct {
		client, sql string
		want        Statement
	}{
		{"mariadb CLI", "select @@version_comment limit 1", &Select{
			Items: []SelectItem{item(sysvar("version_comment"), "@@version_comment")},
			Limit: &Limit{Count: lit(int64(1))},
		}},
		{"MariaDB Connector/J",
			"SELECT @@max_allowed_packet,@@system_time_zone,@@time_zone,@@auto_increment_increment,@@tx_isolation AS tx_isolation,@@session.tx_read_only AS tx_read_only",
			&Select{Items: []SelectItem{
				item(sysvar("max_allowed_packet"), "@@max_allowed_packet"),
				item(sysvar("system_time_zone"), "@@system_time_zone"),
				item(sysvar("time_zone"), "@@time_zone"),
				item(sysvar("auto_increment_increment"), "@@auto_increment_increment"),
				as(sysvar("tx_isolation"), "tx_isolation", "@@tx_isolation AS tx_isolation"),
				as(&Variable{Name: "tx_read_only", System: true, Scope: ScopeSession}, "tx_read_only", "@@session.tx_read_only AS tx_read_only"),
			}}},
		{"MariaDB Connector/J", "SET NAMES utf8mb4", &Set{Assignments: []Assignment{{Name: "names", Scope: ScopeSession, Value: lit("utf8mb4")}}}},
		{"MariaDB Connector/J", "SET autocommit=1", &Set{Assignments: []Assignment{{Name: "autocommit", Scope: ScopeSession, Value: lit(int64(1))}}}},
		{"MariaDB Connector/J", "SET sql_mode=concat(@@sql_mode,',STRICT_TRANS_TABLES')", &Set{Assignments: []Assignment{{
			Name: "sql_mode", Scope: ScopeSession, Value: fn("concat", sysvar("sql_mode"), lit(",STRICT_TRANS_TABLES"))}}}},
		{"pymysql", "SELECT DATABASE()", sel1(fn("database"), "DATABASE()")},
		{"SQLAlchemy", "SHOW VARIABLES LIKE 'sql_mode'", &Show{Kind: ShowVariables, Like: "sql_mode"}},
		{"SQLAlchemy", "SHOW VARIABLES LIKE 'lower_case_table_names'", &Show{Kind: ShowVariables, Like: "lower_case_table_names"}},
		{"SQLAlchemy", "SELECT CAST('test plain returns' AS CHAR(60)) AS anon_1", &Select{Items: []SelectItem{
			as(&Cast{X: lit("test plain returns"), Type: "string"}, "anon_1", "CAST('test plain returns' AS CHAR(60)) AS anon_1")}}},
		{"SQLAlchemy", "SELECT @@tx_isolation", sel1(sysvar("tx_isolation"), "@@tx_isolation")},
		{"SQLAlchemy", "SELECT @@transaction_isolation", sel1(sysvar("transaction_isolation"), "@@transaction_isolation")},
		{"DBeaver", "/* ApplicationName=DBeaver 24.0.0 - Main */ SELECT DATABASE()", sel1(fn("database"), "DATABASE()")},
	}
	for _, tt := range tests {
		stmt, _ := mustParse(t, tt.sql)
		checkModel(t, tt.client+": "+tt.sql, stmt, tt.want)
	}
}

func TestFingerprint(t *testing.T) {
	same := [][2]string{
		{"SELECT COUNT(*) FROM t WHERE a = 1", "select count(*)  from t where a=2"},
		{"SELECT a FROM t WHERE b IN (1, 2, 3)", "SELECT a FROM t WHERE b IN (4, 5)"},
		{"SELECT 'x'", "/* c */ SELECT 'y'"},
	}
	for _, p := range same {
		if a, b := Fingerprint(p[0], MySQL), Fingerprint(p[1], MySQL); a != b {
			t.Errorf("Fingerprint(%q) = %q, Fingerprint(%q) = %q; want equal", p[0], a, p[1], b)
		}
	}
	if got := Fingerprint("SELECT SUM(x) FROM t WHERE a = 'secret'", MySQL); strings.Contains(got, "secret") {
		t.Errorf("Fingerprint kept a literal: %q", got)
	}
	different := [][2]string{
		{"SELECT SUM(x) FROM t", "SELECT AVG(x) FROM t"},
		{"SELECT a FROM t", "SELECT a FROM u"},
	}
	for _, p := range different {
		if a, b := Fingerprint(p[0], MySQL), Fingerprint(p[1], MySQL); a == b {
			t.Errorf("Fingerprint(%q) = Fingerprint(%q) = %q; want different", p[0], p[1], a)
		}
	}
}

// An integer literal beyond what TiDB's value driver can store made it
// panic (found by FuzzParse); it must be a syntax error.
func TestMySQLOverlongDecimal(t *testing.T) {
	long := strings.Repeat("9", 90)
	for _, sql := range []string{"SELECT " + long, "SELECT 1." + long, "SELECT " + long + "." + long} {
		_, _, err := Parse(sql, MySQL)
		if _, ok := err.(*SyntaxError); !ok {
			t.Errorf("Parse(%.30q...) error = %v (%T), want *SyntaxError", sql, err, err)
		}
	}
	// 70 digits fit a DECIMAL literal and keep their exact text.
	digits := strings.Repeat("7", 70)
	stmt, _ := mustParse(t, "SELECT "+digits)
	item := stmt.(*Select).Items[0].Expr.(*Literal)
	if !item.IsDecimal || item.Text != digits {
		t.Errorf("70-digit literal = %s, want a decimal with its exact text", dump(item))
	}
}

// Parsers are pooled; concurrent Parse calls must not share scratch state.
func TestParseConcurrent(t *testing.T) {
	queries := []string{
		"SELECT COUNT(*) FROM t WHERE a = ?",
		"SELECT a, SUM(b) FROM u GROUP BY a",
		"SHOW VARIABLES LIKE 'x'",
		"SET NAMES utf8mb4",
	}
	want := make([]Statement, len(queries))
	for i, q := range queries {
		want[i], _ = mustParse(t, q)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				q := (g + i) % len(queries)
				got, _, err := Parse(queries[q], MySQL)
				if err != nil || !reflect.DeepEqual(got, want[q]) {
					t.Errorf("concurrent Parse(%q) = %s, %v", queries[q], dump(got), err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
