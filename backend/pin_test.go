package backend

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// The backend itself stops a statement that outlives the pinned timeout: a
// client-side deadline alone would leave it running in the server (issue 11:
// a statement kept running for minutes after the proxy gave up on it).
func TestPinnedStatementTimeoutIsEnforcedByTheBackend(t *testing.T) {
	cases := []struct {
		driver string
		dsn    func(*testing.T) string
		query  string
		want   []string // any of these in the error
	}{
		{MySQL, mysqlDSN, "SELECT COUNT(*) FROM pums a, pums b, pums c WHERE a.age + b.age + c.age > 0",
			[]string{"max_statement_time", "interrupted"}},
		{Postgres, pgDSN, "SELECT COUNT(*) FROM pums a, pums b, pums c WHERE a.age + b.age + c.age > 0",
			[]string{"statement timeout"}},
	}
	for _, tc := range cases {
		t.Run(tc.driver, func(t *testing.T) {
			dsn := tc.dsn(t)
			b, err := Open(t.Context(), tc.driver, dsn, 2)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			// No deadline on ctx: only the backend can stop the statement.
			p, err := b.Pin(context.Background(), 500*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			start := time.Now()
			rows, err := p.QueryContext(context.Background(), tc.query)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			took := time.Since(start)
			if err == nil {
				t.Fatalf("a cross join of pums³ finished within the timeout (%v)", took)
			}
			found := false
			for _, w := range tc.want {
				found = found || strings.Contains(err.Error(), w)
			}
			if !found {
				t.Errorf("error %v, want one naming the backend's statement timeout", err)
			}
			t.Logf("stopped by the backend after %v: %v", took, err)
		})
	}
}

// pgDSN returns the DSN of the test PostgreSQL that scripts/test.sh starts,
// or skips the test when there is none.
func pgDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("DPPROXY_TEST_PG_DSN")
	if dsn == "" {
		t.Skip("DPPROXY_TEST_PG_DSN is not set (scripts/test.sh sets it)")
	}
	return dsn
}
