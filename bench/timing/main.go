// Command timing measures the timing side channel of a DP answer: it runs a
// pair of statements that differ only in whether one person matches a
// predicate that makes the backend do more work, many times, interleaved,
// through a MySQL-protocol server (dpproxy, or a backend directly), and
// prints the median latency of each branch and their gap. A gap larger than
// the spread of either branch is a bit per query about that person
// (Haeberlen, Pierce, Narayan, "Differential Privacy Under Fire", 2011).
//
//	go run ./bench/timing -dsn 'analyst:analyst@tcp(127.0.0.1:3307)/demo' -n 200
//
// The default pair is issue 11's: a nested REPLACE that only the person's
// row evaluates. dpproxy now refuses it (its output grows 10,000-fold), so
// -query also takes the allowed form, one REPLACE (10-fold), to measure what
// the cost bound and the response quantum leave.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	_ "github.com/go-sql-driver/mysql"
)

const nested = "SELECT COUNT(*) FROM pums_person WHERE LENGTH(CASE WHEN pid = %d AND income > 20000 THEN " +
	"REPLACE(REPLACE(REPLACE(REPLACE('aaaaaaaaaa','a','aaaaaaaaaa'),'a','aaaaaaaaaa'),'a','aaaaaaaaaa'),'a','aaaaaaaaaa') ELSE '' END) = 1"

const single = "SELECT COUNT(*) FROM pums_person WHERE LENGTH(CASE WHEN pid = %d AND income > 20000 THEN " +
	"REPLACE('aaaaaaaaaa','a','aaaaaaaaaa') ELSE '' END) = 1"

func main() {
	dsn := flag.String("dsn", "", "go-sql-driver DSN of the server (dpproxy's MySQL door)")
	query := flag.String("query", "nested", "nested | single | a template with one %d for the pid")
	match := flag.Int("match", 0, "a pid whose row matches the predicate (0: find one with income > 20000 through -direct)")
	miss := flag.Int("miss", -1, "a pid that matches nothing")
	n := flag.Int("n", 100, "runs of each branch")
	setup := flag.String("setup", "SET dp_epsilon = 0.001", "run once first (';'-separated)")
	flag.Parse()
	tmpl := *query
	switch tmpl {
	case "nested":
		tmpl = nested
	case "single":
		tmpl = single
	}
	if err := run(*dsn, tmpl, *setup, *match, *miss, *n); err != nil {
		fmt.Fprintln(os.Stderr, "timing:", err)
		os.Exit(1)
	}
}

func run(dsn, tmpl, setup string, match, miss, n int) error {
	if match == 0 {
		return fmt.Errorf("-match: give a pid whose row matches (e.g. from the backend: SELECT pid FROM pums_person WHERE income > 20000 LIMIT 1)")
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, s := range strings.Split(setup, ";") {
		if s = strings.TrimSpace(s); s != "" {
			if _, err := conn.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
	}
	once := func(pid int) (time.Duration, string) {
		start := time.Now()
		rows, err := conn.QueryContext(ctx, fmt.Sprintf(tmpl, pid))
		outcome := "answer"
		if err != nil {
			outcome = "error: " + err.Error()
		} else {
			for rows.Next() {
			}
			if err := rows.Err(); err != nil {
				outcome = "error: " + err.Error()
			}
			rows.Close()
		}
		return time.Since(start), outcome
	}
	var hit, nohit []time.Duration
	outcomes := map[string]int{}
	for i := 0; i < n; i++ {
		// Interleaved, so that drift in the machine's load hits both alike.
		d, o := once(match)
		hit = append(hit, d)
		outcomes["match: "+trim(o)]++
		d, o = once(miss)
		nohit = append(nohit, d)
		outcomes["miss:  "+trim(o)]++
	}
	mh, mn := median(hit), median(nohit)
	fmt.Printf("runs %d per branch\n", n)
	for o, c := range outcomes {
		fmt.Printf("  %4d × %s\n", c, o)
	}
	fmt.Printf("match: median %v (p10 %v, p90 %v)\n", mh, pct(hit, 10), pct(hit, 90))
	fmt.Printf("miss:  median %v (p10 %v, p90 %v)\n", mn, pct(nohit, 10), pct(nohit, 90))
	fmt.Printf("gap of the medians: %v\n", mh-mn)
	return nil
}

func trim(s string) string {
	if len(s) > 90 {
		return s[:90] + "…"
	}
	return s
}

func median(d []time.Duration) time.Duration { return pct(d, 50) }

func pct(d []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)*p/100, len(s)-1)]
}
