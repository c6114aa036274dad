// Command loadgen drives one SQL statement against a MySQL-protocol server
// from N concurrent connections for a fixed time and prints throughput and
// latency percentiles. scripts/bench.sh runs it against dpproxy and against
// the backend directly, to report the proxy's cost as a ratio.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	_ "github.com/go-sql-driver/mysql"
)

func main() {
	dsn := flag.String("dsn", "", "go-sql-driver DSN of the server")
	query := flag.String("query", "SELECT 1", "the statement to run")
	setup := flag.String("setup", "", "a statement run once on each connection first")
	conc := flag.Int("c", 1, "concurrent connections")
	dur := flag.Duration("d", 10*time.Second, "how long to run")
	warm := flag.Duration("warmup", 2*time.Second, "warm-up time, not measured")
	label := flag.String("label", "", "label printed with the result")
	flag.Parse()
	if err := run(*dsn, *query, *setup, *conc, *dur, *warm, *label); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run(dsn, query, setup string, conc int, dur, warm time.Duration, label string) error {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(conc)
	db.SetMaxIdleConns(conc)
	ctx := context.Background()
	conns := make([]*sql.Conn, conc)
	for i := range conns {
		if conns[i], err = db.Conn(ctx); err != nil {
			return err
		}
		if setup != "" {
			if _, err := conns[i].ExecContext(ctx, setup); err != nil {
				return fmt.Errorf("setup: %w", err)
			}
		}
	}
	lat := make([][]time.Duration, conc)
	var wg sync.WaitGroup
	var firstErr error
	var once sync.Once
	start := time.Now()
	measureFrom := start.Add(warm)
	end := measureFrom.Add(dur)
	for i := range conns {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for {
				t0 := time.Now()
				if t0.After(end) {
					return
				}
				rows, err := conns[i].QueryContext(ctx, query)
				if err == nil {
					for rows.Next() {
					}
					err = rows.Err()
					rows.Close()
				}
				if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				if t0.After(measureFrom) {
					lat[i] = append(lat[i], time.Since(t0))
				}
			}
		}(i)
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	if len(all) == 0 {
		return fmt.Errorf("no query completed")
	}
	sort.Slice(all, func(a, b int) bool { return all[a] < all[b] })
	pct := func(p float64) time.Duration { return all[int(p*float64(len(all)-1))] }
	fmt.Printf("%-28s c=%-3d qps=%-9.0f p50=%-10s p99=%s\n", label, conc, float64(len(all))/dur.Seconds(),
		pct(0.50).Round(time.Microsecond), pct(0.99).Round(time.Microsecond))
	return nil
}
