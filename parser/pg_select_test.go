package parser

import "testing"

func TestPGSelect(t *testing.T) {
	a, b := col("a"), col("b")
	ia := pgItem(a, "a", "a")
	ib := pgItem(b, "b", "b")
	one := func(text string) *Select { return pgSel1(lit(int64(1)), text, "?column?") }
	tests := []struct {
		sql  string
		want Statement
	}{
		{"SELECT 1", one("1")},
		{"/* ApplicationName=DBeaver */ SELECT 1;", one("1")},
		{"SELECT DISTINCT a FROM t", &Select{Distinct: true, Items: []SelectItem{ia}, From: table("t")}},
		{"SELECT *, t.* FROM t", &Select{
			Items: []SelectItem{{Star: true, Text: "*"}, {Star: true, StarTable: "t", Text: "t.*"}},
			From:  table("t"),
		}},
		// Text is the item as typed, alias included; DefaultName is what
		// PostgreSQL calls an unaliased column.
		{"SELECT  COUNT( * ),Sum(x)  AS total, a IS DISTINCT FROM b, 1 AS from, percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM s.t AS tt", &Select{
			Items: []SelectItem{
				pgItem(countStar(), "COUNT( * )", "count"),
				{Expr: fn("sum", col("x")), Alias: "total", Text: "Sum(x)  AS total", DefaultName: "sum"},
				pgItem(not(bin(OpNullEQ, a, b)), "a IS DISTINCT FROM b", "?column?"),
				{Expr: lit(int64(1)), Alias: "from", Text: "1 AS from", DefaultName: "?column?"},
				pgItem(&Func{Name: "percentile_cont", Args: []Expr{dec(0.5, "0.5")}, WithinGroup: []OrderItem{{Expr: col("x")}}},
					"percentile_cont(0.5) WITHIN GROUP (ORDER BY x)", "percentile_cont"),
			},
			From: &TableName{Schema: "s", Name: "t", Alias: "tt"},
		}},
		{`SELECT n.nspname as "Schema", 'a,b' /* , */ -- ,` + "\nFROM n", &Select{
			Items: []SelectItem{
				{Expr: tcol("n", "nspname"), Alias: "Schema", Text: `n.nspname as "Schema"`, DefaultName: "nspname"},
				pgItem(lit("a,b"), "'a,b'", "?column?"),
			},
			From: table("n"),
		}},
		{"SELECT a, COUNT(*) AS n FROM t WHERE b > 1 GROUP BY a HAVING COUNT(*) > 5 ORDER BY n DESC, 1 LIMIT 10", &Select{
			Items:   []SelectItem{ia, {Expr: countStar(), Alias: "n", Text: "COUNT(*) AS n", DefaultName: "count"}},
			From:    table("t"),
			Where:   bin(OpGT, b, lit(int64(1))),
			GroupBy: []Expr{a},
			Having:  bin(OpGT, countStar(), lit(int64(5))),
			OrderBy: []OrderItem{{Expr: col("n"), Desc: true}, {Expr: lit(int64(1))}},
			Limit:   &Limit{Count: lit(int64(10))},
		}},
		{"SELECT a FROM t ORDER BY a ASC NULLS LAST, b DESC NULLS FIRST", &Select{Items: []SelectItem{ia}, From: table("t"),
			OrderBy: []OrderItem{{Expr: a, Nulls: "last"}, {Expr: b, Desc: true, Nulls: "first"}}}},
		{"SELECT a FROM t GROUP BY 1", &Select{Items: []SelectItem{ia}, From: table("t"), GroupBy: []Expr{lit(int64(1))}}},
		{"SELECT a FROM t LIMIT 5 OFFSET 10", &Select{Items: []SelectItem{ia}, From: table("t"),
			Limit: &Limit{Count: lit(int64(5)), Offset: lit(int64(10))}}},
		{"SELECT a FROM t OFFSET 10", &Select{Items: []SelectItem{ia}, From: table("t"), Limit: &Limit{Offset: lit(int64(10))}}},
		{"SELECT a FROM t LIMIT ALL", &Select{Items: []SelectItem{ia}, From: table("t")}},
		{"SELECT a FROM t FETCH FIRST 3 ROWS ONLY", &Select{Items: []SelectItem{ia}, From: table("t"), Limit: &Limit{Count: lit(int64(3))}}},
		{"SELECT a FROM t OFFSET 2 ROWS FETCH NEXT ROW ONLY", &Select{Items: []SelectItem{ia}, From: table("t"),
			Limit: &Limit{Count: lit(int64(1)), Offset: lit(int64(2))}}},
		// PostgreSQL's grammar expands TABLE t itself.
		{"TABLE t", &Select{Items: []SelectItem{{Star: true, Text: "*"}}, From: table("t")}},
		{"SELECT a FROM t FOR UPDATE", &Select{Items: []SelectItem{ia}, From: table("t"), ForUpdate: true}},
		{"SELECT a FROM t FOR SHARE", &Select{Items: []SelectItem{ia}, From: table("t"), ForUpdate: true}},

		// Joins.
		{"SELECT a FROM t, u", &Select{Items: []SelectItem{ia}, From: &Join{Kind: "cross", Left: table("t"), Right: table("u")}}},
		{"SELECT a FROM t CROSS JOIN u", &Select{Items: []SelectItem{ia}, From: &Join{Kind: "cross", Left: table("t"), Right: table("u")}}},
		{"SELECT a FROM t JOIN u ON t.id = u.id", &Select{Items: []SelectItem{ia},
			From: &Join{Kind: "inner", Left: table("t"), Right: table("u"), On: bin(OpEQ, tcol("t", "id"), tcol("u", "id"))}}},
		{"SELECT a FROM t x INNER JOIN u y USING (id, k)", &Select{Items: []SelectItem{ia},
			From: &Join{Kind: "inner", Left: &TableName{Name: "t", Alias: "x"}, Right: &TableName{Name: "u", Alias: "y"}, Using: []string{"id", "k"}}}},
		{"SELECT a FROM t LEFT JOIN u ON true RIGHT OUTER JOIN v ON false FULL JOIN w ON true", &Select{Items: []SelectItem{ia},
			From: &Join{Kind: "full",
				Left: &Join{Kind: "right",
					Left:  &Join{Kind: "left", Left: table("t"), Right: table("u"), On: lit(true)},
					Right: table("v"), On: lit(false)},
				Right: table("w"), On: lit(true)}}},
		{"SELECT * FROM (SELECT a FROM t) AS d", &Select{Items: []SelectItem{{Star: true, Text: "*"}},
			From: &DerivedTable{Alias: "d", Select: &Select{Items: []SelectItem{ia}, From: table("t")}}}},
		{"SELECT s.r FROM generate_series(1, 3) AS s(r)", &Select{
			Items: []SelectItem{pgItem(tcol("s", "r"), "s.r", "r")},
			From:  &FuncTable{Func: fn("generate_series", lit(int64(1)), lit(int64(3))), Alias: "s", Columns: []string{"r"}}}},
		{"SELECT x FROM pg_catalog.unnest(a) x", &Select{
			Items: []SelectItem{pgItem(col("x"), "x", "x")},
			From:  &FuncTable{Func: &Func{Schema: "pg_catalog", Name: "unnest", Args: []Expr{a}}, Alias: "x"}}},

		// Set operations: the grammar makes INTERSECT bind tighter, the rest
		// associate left, and a trailing ORDER BY / LIMIT applies to the whole.
		{"SELECT a FROM t UNION SELECT b FROM u", &SetOp{Op: "union",
			Left:  &Select{Items: []SelectItem{ia}, From: table("t")},
			Right: &Select{Items: []SelectItem{ib}, From: table("u")}}},
		{"SELECT 1 UNION ALL SELECT 2 INTERSECT SELECT 3 EXCEPT ALL SELECT 4 ORDER BY 1 LIMIT 2", &SetOp{Op: "except all",
			Left: &SetOp{Op: "union all",
				Left:  one("1"),
				Right: &SetOp{Op: "intersect", Left: pgSel1(lit(int64(2)), "2", "?column?"), Right: pgSel1(lit(int64(3)), "3", "?column?")}},
			Right:   pgSel1(lit(int64(4)), "4", "?column?"),
			OrderBy: []OrderItem{{Expr: lit(int64(1))}},
			Limit:   &Limit{Count: lit(int64(2))}}},
		{"(SELECT a FROM t ORDER BY a LIMIT 1) UNION (SELECT b FROM u)", &SetOp{Op: "union",
			Left: &Select{Items: []SelectItem{ia}, From: table("t"),
				OrderBy: []OrderItem{{Expr: a}}, Limit: &Limit{Count: lit(int64(1))}},
			Right: &Select{Items: []SelectItem{ib}, From: table("u")}}},
	}
	for _, tt := range tests {
		stmt, _ := mustParsePG(t, tt.sql)
		checkModel(t, tt.sql, stmt, tt.want)
	}
}

func TestPGSelectUnsupported(t *testing.T) {
	tests := []struct{ sql, what string }{
		{"WITH RECURSIVE x AS (SELECT 1) SELECT * FROM x", "WITH RECURSIVE"},
		{"WITH x(a) AS (SELECT 1) SELECT * FROM x", "column names after a WITH name (alias the columns inside its query)"},
		{"SELECT a INTO t2 FROM t", "SELECT ... INTO"},
		{"SELECT DISTINCT ON (a) a, b FROM t", "DISTINCT ON"},
		{"SELECT a FROM t GROUP BY ROLLUP (a)", "GROUP BY ROLLUP/CUBE/GROUPING SETS"},
		{"SELECT a FROM t GROUP BY DISTINCT a", "GROUP BY DISTINCT"},
		{"SELECT a FROM t NATURAL JOIN u", "NATURAL JOIN"},
		{"SELECT 1 FROM t WINDOW w AS (PARTITION BY a)", "WINDOW clause"},
		{"SELECT s.t.* FROM s.t", "schema-qualified star (db.t.*)"},
		{"SELECT FROM t", "SELECT without a select list"},
		{"SELECT a FROM t ORDER BY a USING <", "ORDER BY ... USING"},
		{"SELECT a FROM t ORDER BY a FETCH FIRST 1 ROW WITH TIES", "FETCH ... WITH TIES"},
		{"SELECT a FROM ONLY t", "ONLY (inheritance)"},
		{"SELECT a FROM d.s.t", "database-qualified table name (db.schema.table)"},
		{"SELECT a FROM t AS x(c)", "table alias column list"},
		{"SELECT a FROM (SELECT 1) AS d(c)", "derived table column list"},
		{"SELECT a FROM t, LATERAL (SELECT 1) d", "LATERAL derived table"},
		{"SELECT a FROM t TABLESAMPLE SYSTEM (10)", "TABLESAMPLE"},
		{"SELECT * FROM unnest(a) WITH ORDINALITY", "WITH ORDINALITY"},
		{"SELECT * FROM ROWS FROM (f(), g())", "ROWS FROM"},
		{"SELECT a FROM (t JOIN u USING (id)) AS j", "alias on a parenthesised join"},
		{"VALUES (1)", "VALUES statement"},
	}
	for _, tt := range tests {
		checkUnsupportedPG(t, tt.sql, tt.what)
	}
}
