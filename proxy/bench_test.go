package proxy

import (
	"testing"

	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/rewrite"
)

const benchPolicy = `
backend: {driver: sqlite, dsn: bench.db}
roles: {analyst: {budget: {epsilon: 10, delta: 1.0e-5}}}
users: {alice: {password: x, role: analyst}}
tables:
  pums:
    privacy_unit: pid
    max_rows_per_unit: 2
    max_groups_per_unit: 2
    columns:
      age: {type: int, lower: 0, upper: 100}
      sex: {type: int, public_values: [0, 1]}
`

type benchSchema map[string][]string

func (s benchSchema) Columns(t string) ([]string, bool) { c, ok := s[t]; return c, ok }

// BenchmarkParseRewriteNoise is the proxy's own work on one DP query: parse,
// plan and rewrite, build the mechanisms, then noise and post-process the
// backend's groups. The backend round trip is not included. Goal: < 50 µs.
func BenchmarkParseRewriteNoise(b *testing.B) {
	pol, err := policy.Parse([]byte(benchPolicy))
	if err != nil {
		b.Fatal(err)
	}
	schema := benchSchema{"pums": {"age", "sex", "educ", "race", "income", "married", "pid"}}
	const q = "SELECT sex, COUNT(*) AS n, AVG(age) FROM pums WHERE age BETWEEN 20 AND 60 GROUP BY sex ORDER BY n DESC"
	groups := []group{
		{keys: []any{int64(0)}, quant: []float64{480, 1234.5, 480}, units: 400},
		{keys: []any{int64(1)}, quant: []float64{520, -2345.5, 520}, units: 430},
	}
	for _, tc := range []struct {
		name  string
		cache *stmtCache
	}{{"cold", newStmtCache(0)}, {"cached", newStmtCache(16)}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				benchOne(b, tc.cache, q, pol, schema, groups)
			}
		})
	}
}

func benchOne(b *testing.B, cache *stmtCache, q string, pol *policy.Policy, schema benchSchema, groups []group) {
	{
		p, err := cache.parse(q, parser.MySQL)
		if err != nil {
			b.Fatal(err)
		}
		plan, err := rewrite.Analyze(rewrite.Input{Select: p.stmt.(*parser.Select), Policy: pol, Schema: schema, Database: "demo", Dialect: parser.MySQL})
		if err != nil {
			b.Fatal(err)
		}
		rel, err := newRelease(plan, 1, 1e-6, "laplace")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := rel.answer(plan, groups); err != nil {
			b.Fatal(err)
		}
	}
}
