package eval

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/parser"
)

func catalog() *Table {
	return &Table{
		Name:    "TABLES",
		Columns: []string{"TABLE_SCHEMA", "TABLE_NAME", "TABLE_TYPE", "TABLE_ROWS"},
		Rows: [][]any{
			{"shop", "orders", "BASE TABLE", int64(120)},
			{"shop", "customers", "BASE TABLE", nil},
			{"shop", "big_orders", "VIEW", nil},
			{"hr", "people", "BASE TABLE", int64(7)},
			{"Shop", "Items", "BASE TABLE", int64(40)},
		},
	}
}

var from = &parser.TableName{Schema: "information_schema", Name: "TABLES"}

func aliased(e parser.Expr, alias string) parser.SelectItem {
	return parser.SelectItem{Expr: e, Alias: alias}
}

func items(names ...string) []parser.SelectItem {
	var its []parser.SelectItem
	for _, n := range names {
		its = append(its, parser.SelectItem{Expr: col(n), Text: n})
	}
	return its
}

func order(desc bool, e parser.Expr) parser.OrderItem { return parser.OrderItem{Expr: e, Desc: desc} }

func limit(count, offset parser.Expr) *parser.Limit {
	return &parser.Limit{Count: count, Offset: offset}
}

func TestSelect(t *testing.T) {
	eq := func(l parser.Expr, r any) parser.Expr { return bin(parser.OpEQ, l, lit(r)) }
	star := []parser.SelectItem{{Star: true}}
	for _, c := range []struct {
		name     string
		sel      *parser.Select
		wantCols []string
		want     [][]any
	}{
		{
			name:     "star",
			sel:      &parser.Select{Items: star, From: from, Where: eq(col("TABLE_NAME"), "people")},
			wantCols: []string{"TABLE_SCHEMA", "TABLE_NAME", "TABLE_TYPE", "TABLE_ROWS"},
			want:     [][]any{{"hr", "people", "BASE TABLE", int64(7)}},
		},
		{
			name:     "where is case-insensitive, order by column",
			sel:      &parser.Select{Items: items("TABLE_NAME"), From: from, Where: eq(col("table_schema"), "SHOP"), OrderBy: []parser.OrderItem{order(false, col("TABLE_NAME"))}},
			wantCols: []string{"TABLE_NAME"},
			want:     [][]any{{"big_orders"}, {"customers"}, {"Items"}, {"orders"}},
		},
		{
			name:     "nulls first ascending",
			sel:      &parser.Select{Items: items("TABLE_NAME", "TABLE_ROWS"), From: from, OrderBy: []parser.OrderItem{order(false, col("TABLE_ROWS")), order(false, col("TABLE_NAME"))}},
			wantCols: []string{"TABLE_NAME", "TABLE_ROWS"},
			want:     [][]any{{"big_orders", nil}, {"customers", nil}, {"people", int64(7)}, {"Items", int64(40)}, {"orders", int64(120)}},
		},
		{
			name:     "nulls last descending, by position",
			sel:      &parser.Select{Items: items("TABLE_NAME", "TABLE_ROWS"), From: from, OrderBy: []parser.OrderItem{order(true, lit(int64(2))), order(false, lit(int64(1)))}},
			wantCols: []string{"TABLE_NAME", "TABLE_ROWS"},
			want:     [][]any{{"orders", int64(120)}, {"Items", int64(40)}, {"people", int64(7)}, {"big_orders", nil}, {"customers", nil}},
		},
		{
			name: "alias, qualified column, order by alias, limit offset",
			sel: &parser.Select{
				Items:   []parser.SelectItem{aliased(&parser.ColumnRef{Table: "t", Name: "TABLE_NAME"}, "n")},
				From:    &parser.TableName{Name: "TABLES", Alias: "t"},
				OrderBy: []parser.OrderItem{order(true, col("n"))},
				Limit:   limit(lit(int64(2)), lit(int64(1))),
			},
			wantCols: []string{"n"},
			want:     [][]any{{"orders"}, {"Items"}},
		},
		{
			name:     "limit from a parameter",
			sel:      &parser.Select{Items: items("TABLE_NAME"), From: from, Limit: limit(&parser.Param{Index: 2}, nil)},
			wantCols: []string{"TABLE_NAME"},
			want:     [][]any{{"orders"}},
		},
		{
			name:     "offset past the end",
			sel:      &parser.Select{Items: items("TABLE_NAME"), From: from, Limit: limit(lit(int64(5)), lit(int64(10)))},
			wantCols: []string{"TABLE_NAME"},
			want:     [][]any{},
		},
		{
			name:     "distinct folds case",
			sel:      &parser.Select{Distinct: true, Items: items("TABLE_SCHEMA"), From: from, OrderBy: []parser.OrderItem{order(false, lit(int64(1)))}},
			wantCols: []string{"TABLE_SCHEMA"},
			want:     [][]any{{"hr"}, {"shop"}},
		},
		{
			name: "group by with count, having, order by aggregate",
			sel: &parser.Select{
				Items:   []parser.SelectItem{{Expr: col("TABLE_TYPE"), Text: "TABLE_TYPE"}, {Expr: countStar(), Text: "COUNT(*)"}, aliased(fn("max", col("TABLE_ROWS")), "most")},
				From:    from,
				GroupBy: []parser.Expr{col("TABLE_TYPE")},
				OrderBy: []parser.OrderItem{order(true, countStar())},
			},
			wantCols: []string{"TABLE_TYPE", "COUNT(*)", "most"},
			want:     [][]any{{"BASE TABLE", int64(4), int64(120)}, {"VIEW", int64(1), nil}},
		},
		{
			name: "group by position, having alias",
			sel: &parser.Select{
				Items:   []parser.SelectItem{aliased(fn("lower", col("TABLE_SCHEMA")), "db"), aliased(countStar(), "n"), aliased(&parser.Func{Name: "count", Args: exprs(col("TABLE_ROWS"))}, "counted")},
				From:    from,
				GroupBy: []parser.Expr{lit(int64(1))},
				Having:  bin(parser.OpGT, col("n"), lit(int64(1))),
			},
			wantCols: []string{"db", "n", "counted"},
			want:     [][]any{{"shop", int64(4), int64(2)}},
		},
		{
			name: "group by alias, sum and avg, count distinct",
			sel: &parser.Select{
				Items: []parser.SelectItem{
					aliased(col("TABLE_TYPE"), "kind"),
					aliased(fn("sum", col("TABLE_ROWS")), "rows"),
					aliased(fn("avg", col("TABLE_ROWS")), "mean"),
					aliased(&parser.Func{Name: "count", Distinct: true, Args: exprs(col("TABLE_SCHEMA"))}, "schemas"),
					aliased(fn("min", col("TABLE_NAME")), "first"),
				},
				From:    from,
				GroupBy: []parser.Expr{col("kind")},
				OrderBy: []parser.OrderItem{order(false, col("kind"))},
			},
			wantCols: []string{"kind", "rows", "mean", "schemas", "first"},
			want: [][]any{
				{"BASE TABLE", int64(167), 167.0 / 3, int64(2), "customers"},
				{"VIEW", nil, nil, int64(1), "big_orders"},
			},
		},
		{
			name:     "aggregate over no rows",
			sel:      &parser.Select{Items: []parser.SelectItem{aliased(countStar(), "n"), aliased(fn("max", col("TABLE_NAME")), "m")}, From: from, Where: lit(false)},
			wantCols: []string{"n", "m"},
			want:     [][]any{{int64(0), nil}},
		},
		{
			name:     "group by over no rows",
			sel:      &parser.Select{Items: []parser.SelectItem{aliased(countStar(), "n")}, From: from, Where: lit(false), GroupBy: []parser.Expr{col("TABLE_TYPE")}},
			wantCols: []string{"n"},
			want:     [][]any{},
		},
		{
			name: "connector/j getTables",
			sel: &parser.Select{
				Items: []parser.SelectItem{
					aliased(null, "TABLE_CAT"),
					aliased(col("TABLE_SCHEMA"), "TABLE_SCHEM"),
					{Expr: col("TABLE_NAME"), Text: "TABLE_NAME"},
					aliased(fn("if", eq(col("TABLE_TYPE"), "BASE TABLE"), lit("TABLE"), col("TABLE_TYPE")), "TABLE_TYPE"),
				},
				From:    from,
				Where:   &parser.Like{X: col("TABLE_SCHEMA"), Pattern: lit("sh%")},
				OrderBy: []parser.OrderItem{order(false, col("TABLE_TYPE")), order(false, col("TABLE_SCHEMA")), order(false, col("TABLE_NAME"))},
			},
			wantCols: []string{"TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE"},
			want: [][]any{
				{nil, "shop", "customers", "TABLE"},
				{nil, "Shop", "Items", "TABLE"},
				{nil, "shop", "orders", "TABLE"},
				{nil, "shop", "big_orders", "VIEW"},
			},
		},
		{
			name:     "mixed kinds sort as strings",
			sel:      &parser.Select{Items: items("TABLE_NAME"), From: from, OrderBy: []parser.OrderItem{order(false, fn("ifnull", col("TABLE_ROWS"), col("TABLE_NAME")))}},
			wantCols: []string{"TABLE_NAME"},
			want:     [][]any{{"orders"}, {"Items"}, {"people"}, {"big_orders"}, {"customers"}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			cols, rows, err := Select(c.sel, catalog(), env())
			if err != nil {
				t.Fatalf("Select: %v", err)
			}
			if !reflect.DeepEqual(cols, c.wantCols) {
				t.Errorf("columns %q, want %q", cols, c.wantCols)
			}
			if len(rows) != len(c.want) {
				t.Fatalf("rows %v, want %v", rows, c.want)
			}
			for i := range rows {
				if len(rows[i]) != len(c.want[i]) {
					t.Fatalf("row %d: %v, want %v", i, rows[i], c.want[i])
				}
				for j := range rows[i] {
					if !sameValue(rows[i][j], c.want[i][j]) {
						t.Errorf("row %d col %d: %#v, want %#v", i, j, rows[i][j], c.want[i][j])
					}
				}
			}
		})
	}
}

func TestSelectWithoutFrom(t *testing.T) {
	for _, c := range []struct {
		name    string
		sel     *parser.Select
		wantCol string
		want    any
		rows    int
	}{
		{"version comment", &parser.Select{
			Items: []parser.SelectItem{{Expr: &parser.Variable{Name: "version_comment", System: true}, Text: "@@version_comment"}},
			Limit: limit(lit(int64(1)), nil),
		}, "@@version_comment", "dpproxy", 1},
		{"database", &parser.Select{Items: []parser.SelectItem{{Expr: fn("database"), Text: "DATABASE()"}}}, "DATABASE()", "shop", 1},
		{"cast with alias", &parser.Select{Items: []parser.SelectItem{aliased(&parser.Cast{X: lit("x"), Type: "string"}, "anon_1")}}, "anon_1", "x", 1},
		{"arithmetic named by text", &parser.Select{Items: []parser.SelectItem{{Expr: bin(parser.OpAdd, lit(int64(1)), lit(int64(1))), Text: "1 + 1"}}}, "1 + 1", int64(2), 1},
		{"literal without text", &parser.Select{Items: []parser.SelectItem{{Expr: lit(int64(1))}}}, "1", int64(1), 1},
		{"count without from", &parser.Select{Items: []parser.SelectItem{{Expr: countStar(), Text: "COUNT(*)"}}}, "COUNT(*)", int64(1), 1},
		{"where false", &parser.Select{Items: []parser.SelectItem{{Expr: lit(int64(1)), Text: "1"}}, Where: lit(int64(0))}, "1", nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			cols, rows, err := Select(c.sel, nil, env())
			if err != nil {
				t.Fatalf("Select: %v", err)
			}
			if len(cols) != 1 || cols[0] != c.wantCol {
				t.Errorf("columns %q, want [%q]", cols, c.wantCol)
			}
			if len(rows) != c.rows {
				t.Fatalf("%d rows, want %d", len(rows), c.rows)
			}
			if c.rows > 0 && !sameValue(rows[0][0], c.want) {
				t.Errorf("got %#v, want %#v", rows[0][0], c.want)
			}
		})
	}
}

func TestSelectStarTable(t *testing.T) {
	sel := &parser.Select{Items: []parser.SelectItem{{Star: true, StarTable: "t"}}, From: &parser.TableName{Name: "TABLES", Alias: "t"}, Limit: limit(lit(int64(1)), nil)}
	cols, rows, err := Select(sel, catalog(), nil)
	if err != nil || len(cols) != 4 || len(rows) != 1 || rows[0][1] != "orders" {
		t.Fatalf("t.*: %v %v %v", cols, rows, err)
	}
}

func TestSelectErrors(t *testing.T) {
	for _, c := range []struct {
		name     string
		sel      *parser.Select
		t        *Table
		contains string
	}{
		{"unknown column", &parser.Select{Items: items("nope"), From: from}, catalog(), "unknown column 'nope'"},
		{"wrong qualifier", &parser.Select{Items: []parser.SelectItem{{Expr: &parser.ColumnRef{Table: "x", Name: "TABLE_NAME"}}}, From: from}, catalog(), "no table x"},
		{"alias hides table name", &parser.Select{Items: []parser.SelectItem{{Expr: &parser.ColumnRef{Table: "TABLES", Name: "TABLE_NAME"}}}, From: &parser.TableName{Name: "TABLES", Alias: "t"}}, catalog(), "no table TABLES"},
		{"star without from", &parser.Select{Items: []parser.SelectItem{{Star: true}}}, nil, "needs a FROM"},
		{"unknown star table", &parser.Select{Items: []parser.SelectItem{{Star: true, StarTable: "x"}}, From: from}, catalog(), "unknown table x"},
		{"aggregate in where", &parser.Select{Items: items("TABLE_NAME"), From: from, Where: bin(parser.OpGT, countStar(), lit(int64(1)))}, catalog(), "invalid use of group function COUNT()"},
		{"nested aggregate", &parser.Select{Items: []parser.SelectItem{{Expr: fn("max", countStar())}}, From: from}, catalog(), "invalid use of group function"},
		{"unsupported aggregate", &parser.Select{Items: []parser.SelectItem{{Expr: fn("group_concat", col("TABLE_NAME"))}}, From: from}, catalog(), "aggregate GROUP_CONCAT() in catalog queries is not supported"},
		{"order position out of range", &parser.Select{Items: items("TABLE_NAME"), From: from, OrderBy: []parser.OrderItem{order(false, lit(int64(2)))}}, catalog(), "unknown column '2' in 'order clause'"},
		{"group position out of range", &parser.Select{Items: items("TABLE_NAME"), From: from, GroupBy: []parser.Expr{lit(int64(0))}}, catalog(), "unknown column '0' in 'group statement'"},
		{"negative limit", &parser.Select{Items: items("TABLE_NAME"), From: from, Limit: limit(lit(int64(-1)), nil)}, catalog(), "non-negative"},
		{"join", &parser.Select{Items: items("a"), From: &parser.Join{Kind: "inner"}}, catalog(), "joins and derived tables"},
		{"no table given", &parser.Select{Items: items("a"), From: from}, nil, "no rows given"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Select(c.sel, c.t, env())
			if err == nil || !strings.Contains(err.Error(), c.contains) {
				t.Fatalf("got %v, want an error containing %q", err, c.contains)
			}
		})
	}
	_, _, err := Select(&parser.Select{Items: items("a"), From: &parser.DerivedTable{}}, catalog(), nil)
	var u *UnsupportedError
	if !errors.As(err, &u) {
		t.Errorf("derived table: got %v, want UnsupportedError", err)
	}
}

func TestHasAggregate(t *testing.T) {
	agg := countStar()
	for _, c := range []struct {
		name string
		e    parser.Expr
		want bool
	}{
		{"plain column", col("a"), false},
		{"scalar function", fn("round", col("a")), false},
		{"window function", &parser.Func{Name: "sum", Args: exprs(col("a")), Over: true}, false},
		{"subquery", &parser.Subquery{Select: &parser.Select{Items: []parser.SelectItem{{Expr: agg}}}}, false},
		{"aggregate", agg, true},
		{"inside function", fn("round", agg), true},
		{"unary", neg(agg), true},
		{"binary", bin(parser.OpDiv, col("a"), agg), true},
		{"case operand", &parser.Case{Operand: agg}, true},
		{"case when", &parser.Case{Whens: []parser.When{{Cond: lit(true), Result: agg}}}, true},
		{"case else", &parser.Case{Whens: []parser.When{{Cond: lit(true), Result: lit(1)}}, Else: agg}, true},
		{"case without", &parser.Case{Whens: []parser.When{{Cond: lit(true), Result: lit(1)}}}, false},
		{"between", &parser.Between{X: col("a"), Lo: lit(1), Hi: agg}, true},
		{"in list", &parser.In{X: col("a"), List: exprs(1, agg)}, true},
		{"is null", &parser.IsNull{X: agg}, true},
		{"is true", &parser.IsBool{X: agg}, true},
		{"like", &parser.Like{X: col("a"), Pattern: agg}, true},
		{"like without", &parser.Like{X: col("a"), Pattern: lit("x")}, false},
		{"cast", &parser.Cast{X: agg, Type: "int"}, true},
		{"row", &parser.Row{Items: exprs(1, agg)}, true},
		{"interval", &parser.Interval{Value: agg, Unit: "day"}, true},
	} {
		if got := hasAggregate(c.e); got != c.want {
			t.Errorf("%s: hasAggregate = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSelectPassesVariablesAndParams(t *testing.T) {
	sel := &parser.Select{
		Items: []parser.SelectItem{{Expr: &parser.Variable{Name: "version_comment", System: true}}, {Expr: &parser.Param{Index: 0}}},
		From:  from,
		Where: bin(parser.OpEQ, col("TABLE_NAME"), lit("people")),
	}
	_, rows, err := Select(sel, catalog(), env())
	if err != nil || len(rows) != 1 || rows[0][0] != "dpproxy" || rows[0][1] != int64(10) {
		t.Fatalf("got %v, %v", rows, err)
	}
}
