package proxy

import (
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/policy"
)

// A training feature is described from public information only; a date's
// bounds are days while its values are dates, so it is not a numeric feature.
func TestFeatureOf(t *testing.T) {
	pol, err := policy.Parse([]byte(`
backend: {driver: sqlite, dsn: t.db}
roles: {r: {budget: {epsilon: 1}}}
users: {u: {password: x, role: r}}
tables:
  visits:
    privacy_unit: row
    columns:
      cost: {lower: 0, upper: 5000}
      kind: {public_values: [a, b]}
      admitted: {type: date, lower: 2015-01-01, upper: 2024-12-31}
      note: {type: string}
`))
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := pol.Table("visits")
	if f, err := featureOf(tb, "cost"); err != nil || !f.Numeric || f.Upper != 5000 {
		t.Errorf("cost: %+v, %v", f, err)
	}
	if f, err := featureOf(tb, "kind"); err != nil || len(f.Categories) != 2 {
		t.Errorf("kind: %+v, %v", f, err)
	}
	for col, want := range map[string]string{"admitted": "date column admitted", "note": "neither public bounds nor public values"} {
		if _, err := featureOf(tb, col); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", col, err, want)
		}
	}
}
