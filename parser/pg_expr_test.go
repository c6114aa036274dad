package parser

import (
	"math"
	"testing"
)

// TestPGExpressions parses "SELECT <expr>" and compares the one item, its
// text and the column name PostgreSQL gives it (checked against PostgreSQL
// 15: psql shows these headers).
func TestPGExpressions(t *testing.T) {
	subSelect1 := pgSel1(lit(int64(1)), "1", "?column?")
	i := func(v int64) *Literal { return lit(v) }
	tests := []struct {
		expr string
		want Expr
		name string
	}{
		// Column references; unquoted names are folded to lower case.
		{"a", col("a"), "a"},
		{"T.A", tcol("t", "a"), "a"},
		{"s.t.a", &ColumnRef{Schema: "s", Table: "t", Name: "a"}, "a"},
		{`"Weird Col"`, col("Weird Col"), "Weird Col"},

		// Constants.
		{"42", i(42), "?column?"},
		{"-5", i(-5), "?column?"},
		{"- -5", i(5), "?column?"},
		{"9999999999", i(9999999999), "?column?"},
		{"1.50", dec(1.5, "1.50"), "?column?"},
		{"-0.5", dec(-0.5, "-0.5"), "?column?"},
		{"1e3", lit(1000.0), "?column?"},
		{"0x1F", i(31), "?column?"},
		{"1_000", i(1000), "?column?"},
		{"'it''s'", lit("it's"), "?column?"},
		{`E'a\nb'`, lit("a\nb"), "?column?"},
		{"$$dollar 'quoted'$$", lit("dollar 'quoted'"), "?column?"},
		{"NULL", lit(nil), "?column?"},
		{"TRUE", lit(true), "?column?"},
		{"false", lit(false), "?column?"},
		{"18446744073709551615", dec(18446744073709551615, "18446744073709551615"), "?column?"},
		{"-9223372036854775808", i(math.MinInt64), "?column?"},

		// Operators.
		{"-a", &Unary{Op: OpNeg, X: col("a")}, "?column?"},
		{"+a", col("a"), "?column?"},
		{"NOT a", not(col("a")), "?column?"},
		{"a + 1", bin(OpAdd, col("a"), i(1)), "?column?"},
		{"a - 1", bin(OpSub, col("a"), i(1)), "?column?"},
		{"a * 2", bin(OpMul, col("a"), i(2)), "?column?"},
		{"a / 2", bin(OpDiv, col("a"), i(2)), "?column?"},
		{"a % 2", bin(OpMod, col("a"), i(2)), "?column?"},
		{"2 ^ 3", fn("power", i(2), i(3)), "?column?"},
		{"(a + 1) * 2", bin(OpMul, bin(OpAdd, col("a"), i(1)), i(2)), "?column?"},
		{"a = 1", bin(OpEQ, col("a"), i(1)), "?column?"},
		{"a <> 1", bin(OpNE, col("a"), i(1)), "?column?"},
		{"a != 1", bin(OpNE, col("a"), i(1)), "?column?"},
		{"a < 1", bin(OpLT, col("a"), i(1)), "?column?"},
		{"a <= 1", bin(OpLE, col("a"), i(1)), "?column?"},
		{"a > 1", bin(OpGT, col("a"), i(1)), "?column?"},
		{"a >= 1", bin(OpGE, col("a"), i(1)), "?column?"},
		{"a IS NOT DISTINCT FROM NULL", bin(OpNullEQ, col("a"), lit(nil)), "?column?"},
		{"a IS DISTINCT FROM b", not(bin(OpNullEQ, col("a"), col("b"))), "?column?"},
		{"a AND b AND c", bin(OpAnd, bin(OpAnd, col("a"), col("b")), col("c")), "?column?"},
		{"a OR b", bin(OpOr, col("a"), col("b")), "?column?"},
		{"a & b", bin(OpBitAnd, col("a"), col("b")), "?column?"},
		{"a | b", bin(OpBitOr, col("a"), col("b")), "?column?"},
		{"a || 'x'", bin(OpConcat, col("a"), lit("x")), "?column?"},
		{"a ~ '^x'", bin(OpRegex, col("a"), lit("^x")), "?column?"},
		{"a ~* '^x'", bin(OpIRegex, col("a"), lit("^x")), "?column?"},
		{"a !~ '^x'", not(bin(OpRegex, col("a"), lit("^x"))), "?column?"},
		{"a !~* '^x'", not(bin(OpIRegex, col("a"), lit("^x"))), "?column?"},
		{"a OPERATOR(pg_catalog.~) '^x'", bin(OpRegex, col("a"), lit("^x")), "?column?"},
		{"a ~ '^(adult)$' COLLATE pg_catalog.default", bin(OpRegex, col("a"), lit("^(adult)$")), "?column?"},

		// Predicates.
		{"a BETWEEN 1 AND 2", &Between{X: col("a"), Lo: i(1), Hi: i(2)}, "?column?"},
		{"a NOT BETWEEN 1 AND 2", &Between{X: col("a"), Lo: i(1), Hi: i(2), Not: true}, "?column?"},
		{"a IN (1, 2)", &In{X: col("a"), List: []Expr{i(1), i(2)}}, "?column?"},
		{"a NOT IN ('x')", &In{X: col("a"), List: []Expr{lit("x")}, Not: true}, "?column?"},
		{"a IN (SELECT 1)", &In{X: col("a"), Sub: subSelect1}, "?column?"},
		{"a NOT IN (SELECT 1)", &In{X: col("a"), Sub: subSelect1, Not: true}, "?column?"},
		{"a = ANY (ARRAY['r', 'p'])", &In{X: col("a"), List: []Expr{lit("r"), lit("p")}}, "?column?"},
		{"a <> ALL (ARRAY[1])", &In{X: col("a"), List: []Expr{i(1)}, Not: true}, "?column?"},
		{"oid = any (pol.polroles)", &AnyOp{Op: OpEQ, X: col("oid"), Array: tcol("pol", "polroles")}, "?column?"},
		{"a > ALL ($1)", &AnyOp{Op: OpGT, X: col("a"), Array: &Param{}, All: true}, "?column?"},
		{"a IS NULL", &IsNull{X: col("a")}, "?column?"},
		{"a ISNULL", &IsNull{X: col("a")}, "?column?"},
		{"a IS NOT NULL", &IsNull{X: col("a"), Not: true}, "?column?"},
		{"a IS TRUE", &IsBool{X: col("a"), Value: true}, "?column?"},
		{"a IS NOT FALSE", &IsBool{X: col("a"), Not: true}, "?column?"},
		{"a IS UNKNOWN", &IsNull{X: col("a")}, "?column?"},
		{"a LIKE 'x%'", &Like{X: col("a"), Pattern: lit("x%")}, "?column?"},
		{"a NOT LIKE 'x%'", &Like{X: col("a"), Pattern: lit("x%"), Not: true}, "?column?"},
		{"a LIKE 'x!%' ESCAPE '!'", &Like{X: col("a"), Pattern: lit("x!%"), Escape: lit("!")}, "?column?"},
		{"a ILIKE 'x'", &Like{X: col("a"), Pattern: lit("x"), CaseInsensitive: true}, "?column?"},
		{"a NOT ILIKE 'x'", &Like{X: col("a"), Pattern: lit("x"), CaseInsensitive: true, Not: true}, "?column?"},
		{"a ~~ 'x'", &Like{X: col("a"), Pattern: lit("x")}, "?column?"},

		// CASE, casts, subqueries, rows, arrays.
		{"CASE a WHEN 1 THEN 'x' ELSE 'y' END", &Case{Operand: col("a"),
			Whens: []When{{Cond: i(1), Result: lit("x")}}, Else: lit("y")}, "case"},
		{"CASE WHEN a > 1 THEN 2 ELSE b END", &Case{Whens: []When{{Cond: bin(OpGT, col("a"), i(1)), Result: i(2)}}, Else: col("b")}, "b"},
		{"a::int", &Cast{X: col("a"), Type: "int"}, "a"},
		{"a::int2", &Cast{X: col("a"), Type: "int"}, "a"},
		{"a::bigint", &Cast{X: col("a"), Type: "int"}, "a"},
		{"CAST(a AS INTEGER)", &Cast{X: col("a"), Type: "int"}, "a"},
		{"1::int8", &Cast{X: i(1), Type: "int"}, "int8"},
		{"a::float4", &Cast{X: col("a"), Type: "float"}, "a"},
		{"a::double precision", &Cast{X: col("a"), Type: "float"}, "a"},
		{"a::real", &Cast{X: col("a"), Type: "float"}, "a"},
		{"a::numeric(10, 2)", &Cast{X: col("a"), Type: "decimal"}, "a"},
		{"a::text", &Cast{X: col("a"), Type: "string"}, "a"},
		{"a::varchar(60)", &Cast{X: col("a"), Type: "string"}, "a"},
		{"CAST(a AS CHAR(2))", &Cast{X: col("a"), Type: "string"}, "a"},
		{"a::name", &Cast{X: col("a"), Type: "string"}, "a"},
		{"a::date", &Cast{X: col("a"), Type: "date"}, "a"},
		{"a::timestamp", &Cast{X: col("a"), Type: "datetime"}, "a"},
		{"a::timestamptz", &Cast{X: col("a"), Type: "datetime"}, "a"},
		{"a::boolean", &Cast{X: col("a"), Type: "bool"}, "a"},
		{"'adult'::regclass", &Cast{X: lit("adult"), Type: "regclass"}, "regclass"},
		{"a::pg_catalog.regtype::pg_catalog.text", &Cast{X: &Cast{X: col("a"), Type: "regtype"}, Type: "string"}, "a"},
		{"a::int2[]", &Cast{X: col("a"), Type: "int[]"}, "a"},
		{"DATE '2024-01-01'", &Cast{X: lit("2024-01-01"), Type: "date"}, "date"},
		{"TIMESTAMP '2024-01-01 10:00:00'", &Cast{X: lit("2024-01-01 10:00:00"), Type: "datetime"}, "timestamp"},
		{"INTERVAL '1 day'", &Cast{X: lit("1 day"), Type: "interval"}, "interval"},
		{"(SELECT 1)", &Subquery{Select: subSelect1}, "?column?"},
		{"(SELECT b AS x FROM t)", &Subquery{Select: &Select{
			Items: []SelectItem{{Expr: col("b"), Alias: "x", Text: "b AS x", DefaultName: "b"}}, From: table("t")}}, "x"},
		{"EXISTS (SELECT 1)", &Subquery{Select: subSelect1, Exists: true}, "exists"},
		{"NOT EXISTS (SELECT 1)", not(&Subquery{Select: subSelect1, Exists: true}), "?column?"},
		{"ARRAY(SELECT 1)", &ArraySubquery{Select: subSelect1}, "array"},
		{"ARRAY[1, 2]", &Array{Items: []Expr{i(1), i(2)}}, "array"},
		{"(a, b) = (1, 2)", bin(OpEQ, &Row{Items: []Expr{col("a"), col("b")}}, &Row{Items: []Expr{i(1), i(2)}}), "?column?"},
		{"ROW(1, 2)", &Row{Items: []Expr{i(1), i(2)}}, "row"},
		{"a[1]", &Subscript{X: col("a"), Index: i(1)}, "a"},
		{"(current_schemas(false))[s.r]", &Subscript{X: fn("current_schemas", lit(false)), Index: tcol("s", "r")}, "current_schemas"},
		{"(i.keys).x", &FieldSelect{X: tcol("i", "keys"), Field: "x"}, "x"},

		// Functions keep their name, lower case, and their schema.
		{"COALESCE(a, b, 1)", fn("coalesce", col("a"), col("b"), i(1)), "coalesce"},
		{"NULLIF(a, 0)", fn("nullif", col("a"), i(0)), "nullif"},
		{"GREATEST(1, a)", fn("greatest", i(1), col("a")), "greatest"},
		{"LEAST(1, a)", fn("least", i(1), col("a")), "least"},
		{"Upper(a)", fn("upper", col("a")), "upper"},
		{"ROUND(x, 2)", fn("round", col("x"), i(2)), "round"},
		{"pg_catalog.version()", &Func{Schema: "pg_catalog", Name: "version"}, "version"},
		{"current_schema()", fn("current_schema"), "current_schema"},
		{"current_setting('server_version_num')", fn("current_setting", lit("server_version_num")), "current_setting"},
		{"current_database()", fn("current_database"), "current_database"},
		{"current_schema", fn("current_schema"), "current_schema"},
		{"CURRENT_USER", fn("current_user"), "current_user"},
		{"SESSION_USER", fn("session_user"), "session_user"},
		{"USER", fn("current_user"), "user"},
		{"CURRENT_CATALOG", fn("current_database"), "current_catalog"},
		{"CURRENT_DATE", fn("current_date"), "current_date"},
		{"CURRENT_TIMESTAMP(3)", fn("current_timestamp", i(3)), "current_timestamp"},
		{"EXTRACT(YEAR FROM d)", fn("extract", lit("year"), col("d")), "extract"},
		{"d AT TIME ZONE 'UTC'", fn("timezone", lit("UTC"), col("d")), "timezone"},

		// Aggregates and window functions.
		{"COUNT(*)", countStar(), "count"},
		{"count(1)", fn("count", i(1)), "count"},
		{"COUNT(DISTINCT a)", &Func{Name: "count", Args: []Expr{col("a")}, Distinct: true}, "count"},
		{"SUM(x)", fn("sum", col("x")), "sum"},
		{"avg(x)", fn("avg", col("x")), "avg"},
		{"stddev(x)", fn("stddev", col("x")), "stddev"},
		{"PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY x)", &Func{Name: "percentile_cont", Args: []Expr{dec(0.5, "0.5")},
			WithinGroup: []OrderItem{{Expr: col("x")}}}, "percentile_cont"},
		{"string_agg(a, ',' ORDER BY a DESC)", &Func{Name: "string_agg", Args: []Expr{col("a"), lit(",")},
			WithinGroup: []OrderItem{{Expr: col("a"), Desc: true}}}, "string_agg"},
		{"COUNT(*) OVER (PARTITION BY a)", &Func{Name: "count", Star: true, Over: true,
			Window: &WindowSpec{PartitionBy: []Expr{col("a")}}}, "count"},
		{"row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum)", &Func{Name: "row_number", Over: true,
			Window: &WindowSpec{PartitionBy: []Expr{tcol("a", "attrelid")}, OrderBy: []OrderItem{{Expr: tcol("a", "attnum")}}}}, "row_number"},
		{"SUM(x) OVER ()", &Func{Name: "sum", Args: []Expr{col("x")}, Over: true, Window: &WindowSpec{}}, "sum"},
	}
	for _, tt := range tests {
		sql := "SELECT " + tt.expr
		stmt, n := mustParsePG(t, sql)
		if n != 0 && tt.expr != "a > ALL ($1)" {
			t.Errorf("Parse(%q) counted %d parameters, want 0", sql, n)
		}
		checkModel(t, sql, stmt, pgSel1(tt.want, tt.expr, tt.name))
	}
}

func TestPGParams(t *testing.T) {
	tests := []struct {
		sql  string
		n    int
		want Statement
	}{
		{"SELECT $1", 1, pgSel1(&Param{Index: 0}, "$1", "?column?")},
		{"SELECT COUNT(*) FROM t WHERE a = $1 AND b IN ($2, $3)", 3, &Select{
			Items: []SelectItem{pgItem(countStar(), "COUNT(*)", "count")},
			From:  table("t"),
			Where: bin(OpAnd, bin(OpEQ, col("a"), &Param{Index: 0}), &In{X: col("b"), List: []Expr{&Param{Index: 1}, &Param{Index: 2}}}),
		}},
		// PostgreSQL numbers parameters by the highest one referenced, and
		// a parameter may be used twice.
		{"SELECT $2 + $2", 2, pgSel1(bin(OpAdd, &Param{Index: 1}, &Param{Index: 1}), "$2 + $2", "?column?")},
		{"SELECT a FROM t LIMIT $1 OFFSET $2", 2, &Select{
			Items: []SelectItem{pgItem(col("a"), "a", "a")},
			From:  table("t"),
			Limit: &Limit{Count: &Param{Index: 0}, Offset: &Param{Index: 1}},
		}},
		// A '$1' inside a string, a dollar-quoted string or a comment is
		// not a parameter; nor is the $ inside an identifier.
		{"SELECT '$1' /* $2 */ -- $3\n", 0, pgSel1(lit("$1"), "'$1'", "?column?")},
		{"SELECT $q$ $1 $q$", 0, pgSel1(lit(" $1 "), "$q$ $1 $q$", "?column?")},
		{"SELECT a$1", 0, pgSel1(col("a$1"), "a$1", "a$1")},
		// Writes are refused, but a prepared INSERT must still report its
		// parameter count to the client.
		{"INSERT INTO t VALUES ($1, $2)", 2, &Write{Verb: "INSERT"}},
	}
	for _, tt := range tests {
		stmt, n := mustParsePG(t, tt.sql)
		if n != tt.n {
			t.Errorf("Parse(%q) counted %d parameters, want %d", tt.sql, n, tt.n)
		}
		checkModel(t, tt.sql, stmt, tt.want)
	}
}

func TestPGUnsupportedExpressions(t *testing.T) {
	tests := []struct{ sql, what string }{
		{"SELECT ~a", "operator ~ (bitwise negation)"},
		{"SELECT a # b", "operator # (bitwise xor)"},
		{"SELECT a << 1", "operator << (shift)"},
		{"SELECT a @> b", "operator @>"},
		{"SELECT a OPERATOR(myschema.+) b", "operator of a schema other than pg_catalog"},
		{"SELECT a FROM t WHERE a = ANY (SELECT 1)", "comparison with ANY/SOME/ALL (subquery)"},
		{"SELECT a FROM t WHERE a > ALL (SELECT 1)", "comparison with ANY/SOME/ALL (subquery)"},
		{`SELECT 'a' COLLATE "C"`, "COLLATE"},
		{"SELECT a SIMILAR TO 'x'", "SIMILAR TO"},
		{"SELECT a BETWEEN SYMMETRIC 2 AND 1", "BETWEEN SYMMETRIC"},
		{"SELECT count(*) FILTER (WHERE a > 1) FROM t", "FILTER (WHERE ...)"},
		{"SELECT sum(x) OVER w FROM t WINDOW w AS ()", "WINDOW clause"},
		{"SELECT sum(x) OVER (ROWS 2 PRECEDING) FROM t", "window frame clause"},
		{"SELECT B'101'", "bit string literal"},
		{"SELECT a[1:2]", "array slice"},
		{"SELECT 1e400", "numeric literal 1e400 (out of float64 range)"},
		{"SELECT GROUPING(a) FROM t GROUP BY a", "GROUPING()"},
		{"SELECT XMLELEMENT(name foo)", "expression of kind XmlExpr"},
		{"SELECT a::SETOF int", "SETOF type"},
	}
	for _, tt := range tests {
		checkUnsupportedPG(t, tt.sql, tt.what)
	}
}
