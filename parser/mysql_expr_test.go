package parser

import (
	"math"
	"testing"
)

// TestMySQLExpressions parses "SELECT <expr>" and compares the one item.
func TestMySQLExpressions(t *testing.T) {
	subSelect1 := &Select{Items: []SelectItem{item(lit(int64(1)), "1")}}
	tests := []struct {
		expr string
		want Expr
	}{
		// Column references.
		{"a", col("a")},
		{"t.a", tcol("t", "a")},
		{"db.t.a", &ColumnRef{Schema: "db", Table: "t", Name: "a"}},
		{"`Weird Col`", col("Weird Col")},

		// Literals.
		{"42", lit(int64(42))},
		{"-5", lit(int64(-5))},
		{"- -5", lit(int64(5))},
		{"1.50", dec(1.5, "1.50")},
		{"-0.5", dec(-0.5, "-0.5")},
		{"1e3", lit(1000.0)},
		{"'it''s'", lit("it's")},
		{`"double quoted"`, lit("double quoted")},
		{"x'41'", lit("A")},
		{"NULL", lit(nil)},
		{"TRUE", lit(true)},
		{"false", lit(false)},
		{"18446744073709551615", dec(18446744073709551615, "18446744073709551615")},
		{"-9223372036854775808", lit(int64(math.MinInt64))},

		// Variables.
		{"@@version_comment", sysvar("version_comment")},
		{"@@SESSION.Time_Zone", &Variable{Name: "time_zone", System: true, Scope: ScopeSession}},
		{"@@global.max_allowed_packet", &Variable{Name: "max_allowed_packet", System: true, Scope: ScopeGlobal}},
		{"@MyVar", &Variable{Name: "myvar"}},

		// Operators.
		{"-a", &Unary{Op: OpNeg, X: col("a")}},
		{"+a", col("a")},
		{"NOT a", not(col("a"))},
		{"!a", not(col("a"))},
		{"a + 1", bin(OpAdd, col("a"), lit(int64(1)))},
		{"a - 1", bin(OpSub, col("a"), lit(int64(1)))},
		{"a * 2", bin(OpMul, col("a"), lit(int64(2)))},
		{"a / 2", bin(OpDiv, col("a"), lit(int64(2)))},
		{"a DIV 2", bin(OpIntDiv, col("a"), lit(int64(2)))},
		{"a % 2", bin(OpMod, col("a"), lit(int64(2)))},
		{"a MOD 2", bin(OpMod, col("a"), lit(int64(2)))},
		{"(a + 1) * 2", bin(OpMul, bin(OpAdd, col("a"), lit(int64(1))), lit(int64(2)))},
		{"a = 1", bin(OpEQ, col("a"), lit(int64(1)))},
		{"a <> 1", bin(OpNE, col("a"), lit(int64(1)))},
		{"a != 1", bin(OpNE, col("a"), lit(int64(1)))},
		{"a < 1", bin(OpLT, col("a"), lit(int64(1)))},
		{"a <= 1", bin(OpLE, col("a"), lit(int64(1)))},
		{"a > 1", bin(OpGT, col("a"), lit(int64(1)))},
		{"a >= 1", bin(OpGE, col("a"), lit(int64(1)))},
		{"a <=> NULL", bin(OpNullEQ, col("a"), lit(nil))},
		{"a AND b", bin(OpAnd, col("a"), col("b"))},
		{"a && b", bin(OpAnd, col("a"), col("b"))},
		{"a OR b", bin(OpOr, col("a"), col("b"))},
		{"a || b", bin(OpOr, col("a"), col("b"))}, // PIPES_AS_CONCAT is off
		{"a XOR b", bin(OpXor, col("a"), col("b"))},
		{"a & b", bin(OpBitAnd, col("a"), col("b"))},
		{"a | b", bin(OpBitOr, col("a"), col("b"))},
		{"a REGEXP '^x'", bin(OpRegex, col("a"), lit("^x"))},
		{"a NOT REGEXP '^x'", not(bin(OpRegex, col("a"), lit("^x")))},

		// Predicates.
		{"a BETWEEN 1 AND 2", &Between{X: col("a"), Lo: lit(int64(1)), Hi: lit(int64(2))}},
		{"a NOT BETWEEN 1 AND 2", &Between{X: col("a"), Lo: lit(int64(1)), Hi: lit(int64(2)), Not: true}},
		{"a IN (1, 2)", &In{X: col("a"), List: []Expr{lit(int64(1)), lit(int64(2))}}},
		{"a NOT IN ('x')", &In{X: col("a"), List: []Expr{lit("x")}, Not: true}},
		{"a IN (SELECT 1)", &In{X: col("a"), Sub: subSelect1}},
		{"a IS NULL", &IsNull{X: col("a")}},
		{"a IS NOT NULL", &IsNull{X: col("a"), Not: true}},
		{"a IS TRUE", &IsBool{X: col("a"), Value: true}},
		{"a IS NOT FALSE", &IsBool{X: col("a"), Value: false, Not: true}},
		{"a LIKE 'x%'", &Like{X: col("a"), Pattern: lit("x%")}},
		{"a NOT LIKE 'x%'", &Like{X: col("a"), Pattern: lit("x%"), Not: true}},
		{"a LIKE 'x!%' ESCAPE '!'", &Like{X: col("a"), Pattern: lit("x!%"), Escape: lit("!")}},
		{"a ILIKE 'x'", &Like{X: col("a"), Pattern: lit("x"), CaseInsensitive: true}},

		// CASE, CAST, subqueries, rows, intervals.
		{"CASE a WHEN 1 THEN 'x' ELSE 'y' END", &Case{Operand: col("a"),
			Whens: []When{{Cond: lit(int64(1)), Result: lit("x")}}, Else: lit("y")}},
		{"CASE WHEN a > 1 THEN 2 END", &Case{Whens: []When{{Cond: bin(OpGT, col("a"), lit(int64(1))), Result: lit(int64(2))}}}},
		{"CAST(a AS SIGNED)", &Cast{X: col("a"), Type: "int"}},
		{"CAST(a AS UNSIGNED)", &Cast{X: col("a"), Type: "int"}},
		{"CAST(a AS DECIMAL(10,2))", &Cast{X: col("a"), Type: "decimal"}},
		{"CAST(a AS DOUBLE)", &Cast{X: col("a"), Type: "float"}},
		{"CAST(a AS CHAR(60))", &Cast{X: col("a"), Type: "string"}},
		{"CAST(a AS DATE)", &Cast{X: col("a"), Type: "date"}},
		{"CAST(a AS DATETIME)", &Cast{X: col("a"), Type: "datetime"}},
		{"CAST(a AS TIME)", &Cast{X: col("a"), Type: "time"}},
		{"CAST(a AS JSON)", &Cast{X: col("a"), Type: "json"}},
		{"CAST(a AS BINARY)", &Cast{X: col("a"), Type: "binary"}},
		{"CONVERT(a, SIGNED)", &Cast{X: col("a"), Type: "int"}},
		{"BINARY a", &Cast{X: col("a"), Type: "binary"}},
		{"CONVERT(a USING utf8mb4)", fn("convert", col("a"), lit("utf8mb4"))},
		{"DATE '2024-01-01'", &Cast{X: lit("2024-01-01"), Type: "date"}},
		{"TIMESTAMP '2024-01-01 10:00:00'", &Cast{X: lit("2024-01-01 10:00:00"), Type: "datetime"}},
		{"(SELECT 1)", &Subquery{Select: subSelect1}},
		{"EXISTS (SELECT 1)", &Subquery{Select: subSelect1, Exists: true}},
		{"NOT EXISTS (SELECT 1)", not(&Subquery{Select: subSelect1, Exists: true})},
		{"(a, b) = (1, 2)", bin(OpEQ, &Row{Items: []Expr{col("a"), col("b")}}, &Row{Items: []Expr{lit(int64(1)), lit(int64(2))}})},
		{"ROW(1, 2)", &Row{Items: []Expr{lit(int64(1)), lit(int64(2))}}},
		{"d + INTERVAL 1 DAY", fn("date_add", col("d"), &Interval{Value: lit(int64(1)), Unit: "day"})},
		{"d - INTERVAL 2 HOUR", fn("date_sub", col("d"), &Interval{Value: lit(int64(2)), Unit: "hour"})},
		{"DATE_ADD(d, INTERVAL 3 MONTH)", fn("date_add", col("d"), &Interval{Value: lit(int64(3)), Unit: "month"})},
		{"ADDDATE(d, 3)", fn("adddate", col("d"), &Interval{Value: lit(int64(3)), Unit: "day"})},
		{"EXTRACT(YEAR FROM d)", fn("extract", lit("year"), col("d"))},
		{"TIMESTAMPDIFF(DAY, a, b)", fn("timestampdiff", lit("day"), col("a"), col("b"))},
		{"TRIM(LEADING 'x' FROM a)", fn("trim", col("a"), lit("x"), lit("leading"))},

		// Functions keep their SQL name, lower case.
		{"IFNULL(a, 0)", fn("ifnull", col("a"), lit(int64(0)))},
		{"COALESCE(a, b, 1)", fn("coalesce", col("a"), col("b"), lit(int64(1)))},
		{"CONCAT(a, 'x')", fn("concat", col("a"), lit("x"))},
		{"FLOOR(x)", fn("floor", col("x"))},
		{"ROUND(x, 2)", fn("round", col("x"), lit(int64(2)))},
		{"YEAR(d)", fn("year", col("d"))},
		{"LEAST(1, a)", fn("least", lit(int64(1)), col("a"))},
		{"GREATEST(1, a)", fn("greatest", lit(int64(1)), col("a"))},
		{"ABS(-1)", fn("abs", lit(int64(-1)))},
		{"MOD(a, 3)", bin(OpMod, col("a"), lit(int64(3)))},
		{"DATABASE()", fn("database")},
		{"USER()", fn("user")},
		{"VERSION()", fn("version")},
		{"CONNECTION_ID()", fn("connection_id")},
		{"NOW()", fn("now")},
		{"CURRENT_USER", fn("current_user")},
		{"mydb.myfunc(1)", &Func{Schema: "mydb", Name: "myfunc", Args: []Expr{lit(int64(1))}}},

		// Aggregates and window functions.
		{"COUNT(*)", countStar()},
		{"count(1)", fn("count", lit(int64(1)))},
		{"COUNT(a)", fn("count", col("a"))},
		{"COUNT(DISTINCT a)", &Func{Name: "count", Args: []Expr{col("a")}, Distinct: true}},
		{"SUM(x)", fn("sum", col("x"))},
		{"Avg(x)", fn("avg", col("x"))},
		{"MIN(x)", fn("min", col("x"))},
		{"MAX(x)", fn("max", col("x"))},
		{"STDDEV(x)", fn("stddev_pop", col("x"))},
		{"STD(x)", fn("stddev_pop", col("x"))},
		{"STDDEV_SAMP(x)", fn("stddev_samp", col("x"))},
		{"VARIANCE(x)", fn("var_pop", col("x"))},
		{"VAR_SAMP(x)", fn("var_samp", col("x"))},
		{"SUM(DISTINCT x)", &Func{Name: "sum", Args: []Expr{col("x")}, Distinct: true}},
		{"GROUP_CONCAT(a ORDER BY b SEPARATOR ';')", &Func{Name: "group_concat", Args: []Expr{col("a"), lit(";")},
			WithinGroup: []OrderItem{{Expr: col("b")}}}},
		{"COUNT(*) OVER (PARTITION BY a)", &Func{Name: "count", Star: true, Over: true}},
		{"ROW_NUMBER() OVER (ORDER BY a)", &Func{Name: "row_number", Over: true}},
		{"SUM(x) OVER ()", &Func{Name: "sum", Args: []Expr{col("x")}, Over: true}},
	}
	for _, tt := range tests {
		sql := "SELECT " + tt.expr
		stmt, n := mustParse(t, sql)
		if n != 0 {
			t.Errorf("Parse(%q) counted %d placeholders, want 0", sql, n)
		}
		checkModel(t, sql, stmt, sel1(tt.want, tt.expr))
	}
}

func TestMySQLParams(t *testing.T) {
	tests := []struct {
		sql  string
		n    int
		want Statement
	}{
		{"SELECT ?", 1, sel1(&Param{Index: 0}, "?")},
		{"SELECT COUNT(*) FROM t WHERE a = ? AND b IN (?, ?)", 3, &Select{
			Items: []SelectItem{item(countStar(), "COUNT(*)")},
			From:  table("t"),
			Where: bin(OpAnd, bin(OpEQ, col("a"), &Param{Index: 0}), &In{X: col("b"), List: []Expr{&Param{Index: 1}, &Param{Index: 2}}}),
		}},
		// LIMIT offset, count: parameters are numbered in text order.
		{"SELECT a FROM t LIMIT ?, ?", 2, &Select{
			Items: []SelectItem{item(col("a"), "a")},
			From:  table("t"),
			Limit: &Limit{Offset: &Param{Index: 0}, Count: &Param{Index: 1}},
		}},
		{"SELECT a FROM t ORDER BY ? LIMIT ?", 2, &Select{
			Items:   []SelectItem{item(col("a"), "a")},
			From:    table("t"),
			OrderBy: []OrderItem{{Expr: &Param{Index: 0}}},
			Limit:   &Limit{Count: &Param{Index: 1}},
		}},
		// A '?' inside a string is not a placeholder.
		{"SELECT 'a?b'", 0, sel1(lit("a?b"), "'a?b'")},
		// Writes are refused, but a prepared INSERT must still report its
		// parameter count to the client.
		{"INSERT INTO t VALUES (?, ?)", 2, &Write{Verb: "INSERT"}},
	}
	for _, tt := range tests {
		stmt, n := mustParse(t, tt.sql)
		if n != tt.n {
			t.Errorf("Parse(%q) counted %d placeholders, want %d", tt.sql, n, tt.n)
		}
		checkModel(t, tt.sql, stmt, tt.want)
	}
}

func TestMySQLUnsupportedExpressions(t *testing.T) {
	tests := []struct{ sql, what string }{
		{"SELECT ~a", "operator ~ (bitwise negation)"},
		{"SELECT a ^ b", "operator ^ (bitwise xor)"},
		{"SELECT a << 1", "operator << (shift)"},
		{"SELECT a FROM t WHERE a = ANY (SELECT 1)", "comparison with ANY/SOME/ALL (subquery)"},
		{"SELECT 'a' COLLATE utf8mb4_bin", "COLLATE"},
		{"SELECT MATCH (a) AGAINST ('x') FROM t", "MATCH ... AGAINST"},
		{"SELECT @a := 1", "assignment to a user variable inside an expression (@v := ...)"},
		{"SELECT NEXTVAL(s)", "sequence function nextval"},
	}
	for _, tt := range tests {
		checkUnsupported(t, tt.sql, tt.what)
	}
}
