package parser

import "testing"

// A CTE is inlined where it is read, as a derived table named after it;
// later CTEs may read earlier ones.
func TestWithIsInlined(t *testing.T) {
	for _, d := range []Dialect{MySQL, PostgreSQL} {
		stmt, _, err := Parse(`WITH old AS (SELECT age, income FROM pums WHERE age > 60),
			rich AS (SELECT income FROM old WHERE income > 1000)
			SELECT COUNT(*) FROM rich r`, d)
		if err != nil {
			t.Fatalf("%v: %v", d, err)
		}
		outer := stmt.(*Select)
		rich, ok := outer.From.(*DerivedTable)
		if !ok || rich.Alias != "r" {
			t.Fatalf("%v: FROM %#v, want the CTE rich as derived table r", d, outer.From)
		}
		old, ok := rich.Select.(*Select).From.(*DerivedTable)
		if !ok || old.Alias != "old" {
			t.Fatalf("%v: rich reads %#v, want the CTE old", d, rich.Select.(*Select).From)
		}
		if tn, ok := old.Select.(*Select).From.(*TableName); !ok || tn.Name != "pums" {
			t.Errorf("%v: old reads %#v, want pums", d, old.Select.(*Select).From)
		}
	}
}
