package parser

import "testing"

// BenchmarkParse measures a typical DP aggregate query; the budget is 30 µs.
func BenchmarkParse(b *testing.B) {
	const sql = "SELECT region, COUNT(*) AS n, AVG(income), SUM(CASE WHEN age > 40 THEN 1 ELSE 0 END) " +
		"FROM census.people p JOIN census.regions r ON p.region_id = r.id " +
		"WHERE p.year BETWEEN 2010 AND 2020 AND p.status IN ('a', 'b') " +
		"GROUP BY region HAVING COUNT(*) > 10 ORDER BY n DESC LIMIT 20"
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Parse(sql, MySQL); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseDPStatement(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Parse("SHOW PRIVACY BUDGET FOR USER alice", MySQL); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTiDBParseOnly is the TiDB parser alone on the same query, to
// tell our conversion's cost from the grammar's.
func BenchmarkTiDBParseOnly(b *testing.B) {
	const sql = "SELECT region, COUNT(*) AS n, AVG(income), SUM(CASE WHEN age > 40 THEN 1 ELSE 0 END) " +
		"FROM census.people p JOIN census.regions r ON p.region_id = r.id " +
		"WHERE p.year BETWEEN 2010 AND 2020 AND p.status IN ('a', 'b') " +
		"GROUP BY region HAVING COUNT(*) > 10 ORDER BY n DESC LIMIT 20"
	p := newMySQLParser()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := p.ParseSQL(sql); err != nil {
			b.Fatal(err)
		}
	}
}
