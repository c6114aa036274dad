package parser

import "testing"

func TestMySQLSelect(t *testing.T) {
	a, b := col("a"), col("b")
	tests := []struct {
		sql  string
		want Statement
	}{
		{"SELECT 1", sel1(lit(int64(1)), "1")},
		{"SELECT 1 FROM DUAL", sel1(lit(int64(1)), "1")},
		{"/* ApplicationName=DBeaver */ SELECT 1;", sel1(lit(int64(1)), "1")},
		{"select @@version_comment limit 1", &Select{
			Items: []SelectItem{item(sysvar("version_comment"), "@@version_comment")},
			Limit: &Limit{Count: lit(int64(1))},
		}},
		{"SELECT DISTINCT a FROM t", &Select{Distinct: true, Items: []SelectItem{item(a, "a")}, From: table("t")}},
		{"SELECT *, t.* FROM t", &Select{
			Items: []SelectItem{{Star: true, Text: "*"}, {Star: true, StarTable: "t", Text: "t.*"}},
			From:  table("t"),
		}},
		// Text is the item as typed, the name MySQL gives an unaliased column.
		{"SELECT  COUNT( * ),Sum(x)  AS total FROM db.t AS tt", &Select{
			Items: []SelectItem{
				item(countStar(), "COUNT( * )"),
				{Expr: fn("sum", col("x")), Alias: "total", Text: "Sum(x)  AS total"},
			},
			From: &TableName{Schema: "db", Name: "t", Alias: "tt"},
		}},
		{"SELECT a, COUNT(*) AS n FROM t WHERE b > 1 GROUP BY a HAVING COUNT(*) > 5 ORDER BY n DESC, 1 LIMIT 10", &Select{
			Items:   []SelectItem{item(a, "a"), {Expr: countStar(), Alias: "n", Text: "COUNT(*) AS n"}},
			From:    table("t"),
			Where:   bin(OpGT, b, lit(int64(1))),
			GroupBy: []Expr{a},
			Having:  bin(OpGT, countStar(), lit(int64(5))),
			OrderBy: []OrderItem{{Expr: col("n"), Desc: true}, {Expr: lit(int64(1))}},
			Limit:   &Limit{Count: lit(int64(10))},
		}},
		{"SELECT a FROM t GROUP BY 1", &Select{Items: []SelectItem{item(a, "a")}, From: table("t"), GroupBy: []Expr{lit(int64(1))}}},
		{"SELECT a FROM t LIMIT 10, 5", &Select{Items: []SelectItem{item(a, "a")}, From: table("t"),
			Limit: &Limit{Count: lit(int64(5)), Offset: lit(int64(10))}}},
		{"SELECT a FROM t LIMIT 5 OFFSET 10", &Select{Items: []SelectItem{item(a, "a")}, From: table("t"),
			Limit: &Limit{Count: lit(int64(5)), Offset: lit(int64(10))}}},
		{"SELECT a FROM t FOR UPDATE", &Select{Items: []SelectItem{item(a, "a")}, From: table("t"), ForUpdate: true}},
		{"SELECT a FROM t LOCK IN SHARE MODE", &Select{Items: []SelectItem{item(a, "a")}, From: table("t"), ForUpdate: true}},
		{"SELECT a FROM t USE INDEX (i)", &Select{Items: []SelectItem{item(a, "a")}, From: table("t")}},

		// Joins.
		{"SELECT a FROM t, u", &Select{Items: []SelectItem{item(a, "a")},
			From: &Join{Kind: "cross", Left: table("t"), Right: table("u")}}},
		{"SELECT a FROM t CROSS JOIN u", &Select{Items: []SelectItem{item(a, "a")},
			From: &Join{Kind: "cross", Left: table("t"), Right: table("u")}}},
		{"SELECT a FROM t JOIN u ON t.id = u.id", &Select{Items: []SelectItem{item(a, "a")},
			From: &Join{Kind: "inner", Left: table("t"), Right: table("u"), On: bin(OpEQ, tcol("t", "id"), tcol("u", "id"))}}},
		{"SELECT a FROM t x INNER JOIN u y USING (id, k)", &Select{Items: []SelectItem{item(a, "a")},
			From: &Join{Kind: "inner", Left: &TableName{Name: "t", Alias: "x"}, Right: &TableName{Name: "u", Alias: "y"}, Using: []string{"id", "k"}}}},
		{"SELECT a FROM t LEFT JOIN u ON 1 RIGHT OUTER JOIN v ON 2", &Select{Items: []SelectItem{item(a, "a")},
			From: &Join{Kind: "right",
				Left:  &Join{Kind: "left", Left: table("t"), Right: table("u"), On: lit(int64(1))},
				Right: table("v"), On: lit(int64(2))}}},
		{"SELECT * FROM (SELECT a FROM t) AS d", &Select{Items: []SelectItem{{Star: true, Text: "*"}},
			From: &DerivedTable{Alias: "d", Select: &Select{Items: []SelectItem{item(a, "a")}, From: table("t")}}}},

		// Set operations: INTERSECT binds tighter, the rest associate left,
		// and a trailing ORDER BY / LIMIT applies to the whole.
		{"SELECT a FROM t UNION SELECT b FROM u", &SetOp{Op: "union",
			Left:  &Select{Items: []SelectItem{item(a, "a")}, From: table("t")},
			Right: &Select{Items: []SelectItem{item(b, "b")}, From: table("u")}}},
		{"SELECT 1 UNION ALL SELECT 2 INTERSECT SELECT 3 EXCEPT SELECT 4 ORDER BY 1 LIMIT 2", &SetOp{Op: "except",
			Left: &SetOp{Op: "union all",
				Left:  sel1(lit(int64(1)), "1"),
				Right: &SetOp{Op: "intersect", Left: sel1(lit(int64(2)), "2"), Right: sel1(lit(int64(3)), "3")}},
			Right:   sel1(lit(int64(4)), "4"),
			OrderBy: []OrderItem{{Expr: lit(int64(1))}},
			Limit:   &Limit{Count: lit(int64(2))}}},
		{"(SELECT a FROM t ORDER BY a LIMIT 1) UNION (SELECT b FROM u)", &SetOp{Op: "union",
			Left: &Select{Items: []SelectItem{item(a, "a")}, From: table("t"),
				OrderBy: []OrderItem{{Expr: a}}, Limit: &Limit{Count: lit(int64(1))}},
			Right: &Select{Items: []SelectItem{item(b, "b")}, From: table("u")}}},
	}
	for _, tt := range tests {
		stmt, _ := mustParse(t, tt.sql)
		checkModel(t, tt.sql, stmt, tt.want)
	}
}

func TestMySQLSelectUnsupported(t *testing.T) {
	tests := []struct{ sql, what string }{
		{"WITH RECURSIVE x AS (SELECT 1) SELECT * FROM x", "WITH RECURSIVE"},
		{"WITH x AS (SELECT 1) SELECT 1 UNION SELECT 2", "WITH (common table expressions)"},
		{"SELECT a FROM t INTO OUTFILE '/tmp/x'", "SELECT ... INTO"},
		{"SELECT a FROM t GROUP BY a WITH ROLLUP", "GROUP BY ... WITH ROLLUP"},
		{"SELECT a FROM t NATURAL JOIN u", "NATURAL JOIN"},
		{"SELECT 1 FROM t WINDOW w AS (PARTITION BY a)", "WINDOW clause"},
		{"SELECT db.t.* FROM db.t", "schema-qualified star (db.t.*)"},
		{"SELECT a FROM t AS OF TIMESTAMP NOW()", "AS OF TIMESTAMP"},
		{"TABLE t", "TABLE statement"},
		{"VALUES ROW(1)", "VALUES statement"},
	}
	for _, tt := range tests {
		checkUnsupported(t, tt.sql, tt.what)
	}
}
