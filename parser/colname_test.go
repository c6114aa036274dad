package parser

import "testing"

// TestColumnName checks the names of unaliased result columns against what
// MariaDB 10.11 and PostgreSQL 17 call the same items (checked by hand on
// both servers; the integration tests compare through the doors).
func TestColumnName(t *testing.T) {
	long := "1"
	for i := 0; i < 200; i++ {
		long += "+1"
	}
	tests := []struct {
		dialect Dialect
		item    string
		want    string
	}{
		{MySQL, "`sex`", "sex"},
		{MySQL, "`adult`.`sex`", "sex"},
		{MySQL, "adult.sex", "sex"},
		{MySQL, "census.adult.sex", "sex"},
		{MySQL, "(age)", "age"},
		{MySQL, "COUNT(*)", "COUNT(*)"},
		{MySQL, "count( * )", "count( * )"},
		{MySQL, "`age` + 1", "`age` + 1"},
		{MySQL, "AVG(`adult`.`age`)", "AVG(`adult`.`age`)"},
		{MySQL, "'a''b'", "a'b"},
		{MySQL, `"x"`, "x"},
		{MySQL, "_utf8'x'", "x"},
		{MySQL, "N'y'", "y"},
		{MySQL, "''", ""},
		{MySQL, "0x41", "0x41"},
		{MySQL, "X'41'", "X'41'"},
		{MySQL, "b'1'", "b'1'"},
		{MySQL, "NULL", "NULL"},
		{MySQL, "-1", "-1"},
		{MySQL, "1.50", "1.50"},
		{MySQL, "DATE '2020-01-01'", "DATE '2020-01-01'"},
		{MySQL, "CASE WHEN 1 THEN 2 END", "CASE WHEN 1 THEN 2 END"},
		{MySQL, long, long[:255]},
		{MySQL, "`sex` AS `Sex`", "Sex"},
		{MySQL, "COUNT(*) n", "n"},
		{PostgreSQL, `"education_levels"."level"`, "level"},
		{PostgreSQL, `education_levels.level`, "level"},
		{PostgreSQL, `"sex"`, "sex"},
		{PostgreSQL, "COUNT(*)", "count"},
		{PostgreSQL, "avg(age)", "avg"},
		{PostgreSQL, "1+1", "?column?"},
		{PostgreSQL, "'abc'", "?column?"},
		{PostgreSQL, "CASE WHEN true THEN 1 END", "case"},
		{PostgreSQL, "level::text", "level"},
		{PostgreSQL, "1::int", "int4"},
		{PostgreSQL, `count(*) AS "N"`, "N"},
	}
	for _, tc := range tests {
		st, _, err := Parse("SELECT "+tc.item+" FROM adult", tc.dialect)
		if err != nil {
			t.Errorf("%v %s: %v", tc.dialect, tc.item, err)
			continue
		}
		if got := st.(*Select).Items[0].ColumnName(); got != tc.want {
			t.Errorf("%v %s: column name %q, want %q", tc.dialect, tc.item, got, tc.want)
		}
	}
}
