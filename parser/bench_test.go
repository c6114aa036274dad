package parser

import "testing"

// The budget is 30 µs for a typical aggregate query (BenchmarkParse).
const (
	benchTypical = "SELECT region, COUNT(*), AVG(income) FROM people WHERE age > 30 GROUP BY region"
	benchComplex = "SELECT region, COUNT(*) AS n, AVG(income), SUM(CASE WHEN age > 40 THEN 1 ELSE 0 END) " +
		"FROM census.people p JOIN census.regions r ON p.region_id = r.id " +
		"WHERE p.year BETWEEN 2010 AND 2020 AND p.status IN ('a', 'b') " +
		"GROUP BY region HAVING COUNT(*) > 10 ORDER BY n DESC LIMIT 20"
)

func BenchmarkParse(b *testing.B)        { benchmarkParse(b, benchTypical) }
func BenchmarkParseComplex(b *testing.B) { benchmarkParse(b, benchComplex) }
func BenchmarkParseDPStatement(b *testing.B) {
	benchmarkParse(b, "SHOW PRIVACY BUDGET FOR USER alice")
}

func benchmarkParse(b *testing.B, sql string) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Parse(sql, MySQL); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTiDBParseOnly is the TiDB parser alone on the complex query, to
// tell the conversion's cost from the grammar's.
func BenchmarkTiDBParseOnly(b *testing.B) {
	p := newMySQLParser()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := p.ParseSQL(benchComplex); err != nil {
			b.Fatal(err)
		}
	}
}
