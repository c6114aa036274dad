package rewrite

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/parser"
)

// maxQuantileBins bounds the histogram of a DP quantile with one bin per
// integer (ages, days between two dates over decades): the exponential
// mechanism's work and the backend's histogram rows grow with it, its
// rank error only with its logarithm.
const maxQuantileBins = 10000

// quantile registers MIN, MAX, MEDIAN(x) or PERCENTILE_CONT(p) WITHIN GROUP
// (ORDER BY x). They are released by the exponential mechanism over a
// histogram of the bounded domain (mechanism.Quantile): the backend counts
// the clamped values per bin; no raw value leaves it.
func (a *analysis) quantile(f *parser.Func, upper string) error {
	agg := &Aggregate{Kind: AggQuantile}
	var arg parser.Expr
	switch f.Name {
	case "min", "max", "median":
		if len(f.Args) != 1 || f.Star || f.Distinct {
			return unsupported("%s needs exactly one argument", upper)
		}
		arg = f.Args[0]
		agg.P = map[string]float64{"min": 0, "max": 1, "median": 0.5}[f.Name]
	case "percentile_cont":
		if len(f.Args) != 1 || len(f.WithinGroup) != 1 {
			return unsupported("PERCENTILE_CONT(p) WITHIN GROUP (ORDER BY x)")
		}
		lit, ok := f.Args[0].(*parser.Literal)
		var p float64
		if ok {
			switch v := lit.Value.(type) {
			case float64:
				p = v
			case int64:
				p = float64(v)
			default:
				ok = false
			}
		}
		if !ok || p < 0 || p > 1 {
			return unsupported("PERCENTILE_CONT needs a constant fraction between 0 and 1")
		}
		if f.WithinGroup[0].Desc {
			p = 1 - p
		}
		agg.P, arg = p, f.WithinGroup[0].Expr
	}
	if err := a.rowLevel(arg, "the argument of "+upper); err != nil {
		return err
	}
	if _, err := (&renderer{dialect: a.in.Dialect, params: a.in.Params}).expr(arg); err != nil {
		return err
	}
	b, err := a.bound(arg)
	if err != nil {
		var nb *noBoundError
		if errors.As(err, &nb) {
			return refuse("%s(%s) needs a public bound for %s: add lower and upper for its columns to the policy of %s", upper, exprText(arg), nb.expr, a.table.Name)
		}
		return err
	}
	if b.hi <= b.lo {
		return unsupported("%s over a constant", upper)
	}
	agg.Arg, agg.Key, agg.Lower, agg.Upper = arg, a.text(arg), b.lo, b.hi
	// Integers in a small range get one bin each, [v, v+1), so MEDIAN(age)
	// is an age; otherwise 256 equal bins over [lower, upper].
	agg.Bins, agg.BinWidth = 256, (b.hi-b.lo)/256
	if n := b.hi - b.lo + 1; b.isInt && n <= maxQuantileBins {
		agg.Bins, agg.BinWidth = int(n), 1
	}
	return a.register(f, agg, fmt.Sprintf("quantile(%g, %s)", agg.P, agg.Key))
}

// quantileHistograms writes each quantile's backend statement: counts per
// (keys, bin) of the argument clamped to its bounds, over rows bounded per
// unit by sampling (a histogram needs whole rows: scaling would make
// fractional counts). With MaxRows rows per unit, one unit moves the rank of
// any value by at most MaxRows — the sensitivity mechanism.Quantile assumes.
// With GROUP BY over a unit-column table a unit also reaches at most
// MaxGroups groups (sampledGroupRows), so the engine releases each group's
// quantile at 1/MaxGroups of the aggregate's ε (basic composition).
func (a *analysis) quantileHistograms(r *renderer, table, where string, keys []string) error {
	for _, agg := range a.plan.Aggs {
		if agg.Kind != AggQuantile {
			continue
		}
		arg, err := r.expr(agg.Arg)
		if err != nil {
			return err
		}
		bin := r.binSQL(arg, agg)
		cols := append(append([]string{}, keys...), bin, "COUNT(*)")
		if a.table.UnitIsRow() {
			w := where
			cond := "(" + arg + ") IS NOT NULL"
			if w == "" {
				w = " WHERE " + cond
			} else {
				w += " AND " + cond
			}
			agg.Histogram = "SELECT " + strings.Join(cols, ", ") + " FROM " + table + w + " GROUP BY " + ordinals(len(keys)+1)
			continue
		}
		if len(keys) > 0 {
			rows, alias := a.sampledGroupRows(r, table, where, keys, []string{agg.Key}, map[string]string{agg.Key: arg})
			binX := r.binSQL(alias[agg.Key], agg)
			agg.Histogram = "SELECT " + strings.Join(append(keyAliases(len(keys)), binX, "COUNT(*)"), ", ") + " FROM (" + rows + ") dp_sampled WHERE " +
				alias[agg.Key] + " IS NOT NULL GROUP BY " + ordinals(len(keys)+1)
			continue
		}
		unit := a.unitSQL(r)
		rows := "SELECT " + arg + " AS dp_x, ROW_NUMBER() OVER (PARTITION BY " + unit + " ORDER BY " + r.random() +
			") AS dp_row_rank FROM " + table + where
		binX := r.binSQL("dp_x", agg)
		agg.Histogram = "SELECT " + binX + ", COUNT(*) FROM (" + rows + ") dp_rows WHERE dp_row_rank <= " +
			strconv.Itoa(a.plan.Contribution.MaxRows) + " AND dp_x IS NOT NULL GROUP BY 1"
	}
	return nil
}

// binSQL is the histogram bin of a quantile's argument x (SQL): its clamped
// value's offset from the lower bound in bin widths. On PostgreSQL the
// offset is NUMERIC: over an int4 it could overflow (a negative lower bound
// doubles the range), and a double's tiny offset divided by the width can
// underflow, both of which PostgreSQL raises (total.go).
func (r *renderer) binSQL(x string, agg *Aggregate) string {
	v := r.clamp(x, agg.Lower, agg.Upper)
	if r.dialect == parser.PostgreSQL {
		v = "CAST(" + v + " AS NUMERIC)"
	}
	return "FLOOR((" + v + " - " + number(agg.Lower) + ") / " + number(agg.BinWidth) + ")"
}
