package parser

import (
	"testing"

	pgquery "github.com/pganalyze/pg_query_go/v6"
)

// The PostgreSQL counterparts of bench_test.go's queries; the budget is the
// same 30 µs for the typical one.
const (
	benchPGTypical = "SELECT region, COUNT(*), AVG(income) FROM people WHERE age > 30 GROUP BY region"
	benchPGComplex = "SELECT region, COUNT(*) AS n, AVG(income), SUM(CASE WHEN age > 40 THEN 1 ELSE 0 END) " +
		"FROM census.people p JOIN census.regions r ON p.region_id = r.id " +
		"WHERE p.year BETWEEN 2010 AND 2020 AND p.status IN ('a', 'b') AND p.name ILIKE $1 " +
		"GROUP BY region HAVING COUNT(*) > 10 ORDER BY n DESC NULLS LAST LIMIT 20"
)

func BenchmarkParsePG(b *testing.B)        { benchmarkParsePG(b, benchPGTypical) }
func BenchmarkParsePGComplex(b *testing.B) { benchmarkParsePG(b, benchPGComplex) }

// BenchmarkParsePGPsqlDescribe is psql's largest \d query in the corpus.
func BenchmarkParsePGPsqlDescribe(b *testing.B) {
	_, queries := pgClientQueries(b)
	longest := ""
	for _, q := range queries {
		if len(q) > len(longest) {
			longest = q
		}
	}
	benchmarkParsePG(b, longest)
}

func benchmarkParsePG(b *testing.B, sql string) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Parse(sql, PostgreSQL); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPGQueryParseOnly is pg_query alone on the complex query, to tell
// the conversion's cost from the C parser's and the protobuf decoding's.
func BenchmarkPGQueryParseOnly(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pgquery.Parse(benchPGComplex); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFingerprintPG(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = Fingerprint(benchPGComplex, PostgreSQL)
	}
}
