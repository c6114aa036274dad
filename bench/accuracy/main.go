// Command accuracy measures how accurate dpproxy's answers are: the median
// relative error of COUNT, SUM, AVG, STDDEV and MEDIAN on Adult grouped by
// sex, at ε = 0.1, 1 and 10, over many runs, next to the error of the plain
// Laplace mechanism spending the same ε on that one number with its exact
// sensitivity (a lower bound for any answer that also bounds contributions
// and releases the count it divides by). It runs the real engine in-process
// on the demo's SQLite data; scripts/bench.sh prints its table.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/dpproxy/dpproxy/backend"
	"github.com/dpproxy/dpproxy/demo"
	"github.com/dpproxy/dpproxy/ledger"
	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/proxy"
)

func main() {
	runs := flag.Int("runs", 101, "answers per cell; the median error is reported")
	flag.Parse()
	if err := run(*runs); err != nil {
		fmt.Fprintln(os.Stderr, "accuracy:", err)
		os.Exit(1)
	}
}

type aggregate struct {
	name, expr string
	// exact computes the true value per sex; laplace is the plain Laplace
	// mechanism's median absolute error at ε for one group (b·ln 2).
	exact   string
	laplace func(eps float64, n float64) float64
}

func run(runs int) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "dpproxy-accuracy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	pol, err := demo.Policy(demo.Options{DataDir: dir, MySQLListen: "127.0.0.1:0"})
	if err != nil {
		return err
	}
	pol.Roles["bench"] = &policy.Role{Budget: policy.Budget{Epsilon: 1e12, Delta: 0.5}}
	pol.Users["bench"] = &policy.User{Password: "x", Role: "bench"}
	if err := pol.Validate(); err != nil {
		return err
	}
	if err := demo.Prepare(ctx, pol); err != nil {
		return err
	}
	b, err := backend.Open(ctx, "sqlite", pol.Backend.DSN, 4)
	if err != nil {
		return err
	}
	defer b.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	led, err := ledger.Open(filepath.Join(dir, "bench-ledger"), ledger.Options{Logger: quiet})
	if err != nil {
		return err
	}
	defer led.Close()
	eng, err := proxy.New(ctx, proxy.Config{Policy: pol, Backend: b, Ledger: led, Logger: quiet, Database: "demo"})
	if err != nil {
		return err
	}
	s, err := eng.NewSession(ctx, "bench", "demo", parser.MySQL)
	if err != nil {
		return err
	}
	if _, err := s.Execute(ctx, "SET dp_cache = off"); err != nil {
		return err
	}
	ln2 := math.Ln2
	aggs := []aggregate{
		{"COUNT", "COUNT(*)", "COUNT(*)", func(e, n float64) float64 { return ln2 / e }},
		{"SUM", "SUM(hours_per_week)", "SUM(hours_per_week)", func(e, n float64) float64 { return 99 * ln2 / e }},
		// With the count known, the mean's error is that of the centred sum
		// (sensitivity (99−1)/2 for hours, (90−17)/2 for age) over n.
		{"AVG", "AVG(age)", "AVG(age)", func(e, n float64) float64 { return 36.5 * ln2 / e / n }},
		// The variance from Σd² alone (sensitivity 36.5²) over n; the
		// standard deviation's error is about that over 2σ (σ ≈ 13.6).
		{"STDDEV", "STDDEV_POP(age)", "SQRT(AVG(age*age) - AVG(age)*AVG(age))", func(e, n float64) float64 {
			return 36.5 * 36.5 * ln2 / e / n / (2 * 13.6)
		}},
		{"MEDIAN", "MEDIAN(age)", "", nil},
	}
	exactMedian := map[string]float64{}
	for _, sex := range []string{"Female", "Male"} {
		var ages []float64
		rows, err := b.DB.QueryContext(ctx, "SELECT age FROM adult WHERE sex = ?", sex)
		if err != nil {
			return err
		}
		for rows.Next() {
			var a float64
			rows.Scan(&a)
			ages = append(ages, a)
		}
		rows.Close()
		sort.Float64s(ages)
		exactMedian[sex] = ages[len(ages)/2]
	}
	fmt.Printf("median relative error over %d runs, Adult grouped by sex (the worse of the two groups)\n", runs)
	fmt.Printf("%-8s %8s %14s %18s %8s\n", "", "ε", "dpproxy", "plain Laplace", "ratio")
	for _, a := range aggs {
		exact := map[string]float64{}
		counts := map[string]float64{}
		rows, err := b.DB.QueryContext(ctx, "SELECT sex, COUNT(*)"+
			map[bool]string{true: "", false: ", " + a.exact}[a.exact == ""]+" FROM adult GROUP BY sex")
		if err != nil {
			return err
		}
		for rows.Next() {
			var sex string
			var n, v float64
			if a.exact == "" {
				rows.Scan(&sex, &n)
				v = exactMedian[sex]
			} else {
				rows.Scan(&sex, &n, &v)
			}
			exact[sex], counts[sex] = v, n
		}
		rows.Close()
		for _, eps := range []float64{0.1, 1, 10} {
			if _, err := s.Execute(ctx, fmt.Sprintf("SET dp_epsilon = %g", eps)); err != nil {
				return err
			}
			errs := map[string][]float64{}
			for i := 0; i < runs; i++ {
				res, err := s.Execute(ctx, "SELECT sex, "+a.expr+" FROM adult GROUP BY sex")
				if err != nil {
					return err
				}
				for _, r := range res.Rows {
					sex := r[0].(string)
					v := toFloat(r[1])
					errs[sex] = append(errs[sex], math.Abs(v-exact[sex])/math.Abs(exact[sex]))
				}
			}
			worst, worstSex := 0.0, ""
			for sex, e := range errs {
				if m := median(e); m >= worst {
					worst, worstSex = m, sex
				}
			}
			lower := "—"
			ratio := "—"
			if a.laplace != nil {
				l := a.laplace(eps, counts[worstSex]) / math.Abs(exact[worstSex])
				lower = fmt.Sprintf("%.3g%%", 100*l)
				ratio = fmt.Sprintf("%.2f", worst/l)
			}
			fmt.Printf("%-8s %8g %13.3g%% %18s %8s\n", a.name, eps, 100*worst, lower, ratio)
		}
	}
	return nil
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return math.NaN()
}

func median(xs []float64) float64 {
	sort.Float64s(xs)
	return xs[len(xs)/2]
}
