package mechanism

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func mustQuantile(t *testing.T, eps, lower, upper float64, bins, maxRows int) *Quantile {
	t.Helper()
	q, err := NewQuantile(eps, lower, upper, bins, maxRows)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// implProbs returns the bin probabilities the implementation samples from,
// exp(−C·D_b/2^S) normalised, computed in floating point for testing.
func implProbs(t *testing.T, q *Quantile, counts []int64, p float64) []float64 {
	t.Helper()
	pr, err := q.params(p)
	if err != nil {
		t.Fatal(err)
	}
	d, err := q.distances(counts, pr)
	if err != nil {
		t.Fatal(err)
	}
	probs := make([]float64, len(d))
	var z float64
	for b, v := range d {
		probs[b] = math.Exp(-math.Ldexp(float64(pr.c), -int(pr.s)) * float64(v))
		z += probs[b]
	}
	for b := range probs {
		probs[b] /= z
	}
	return probs
}

// definitionProbs computes the mechanism's distribution from its definition
// in real arithmetic, independently of the integer encoding: weights
// exp(−ε·d(b)/(2Δ)) with d(b) = max(0, L_b + 1 − h, h − U_b),
// h = 1 + t(1 − 2p) + p(n − 1), t = (2Δ/ε)·ln K, Δ = max(p, 1−p)·maxRows.
func definitionProbs(eps float64, maxRows int, counts []int64, p float64) []float64 {
	return trimmedProbs(eps, maxRows, counts, p, true)
}

// trimmedProbs is definitionProbs with the trim t optionally left out.
func trimmedProbs(eps float64, maxRows int, counts []int64, p float64, trimmed bool) []float64 {
	delta := max(p, 1-p) * float64(maxRows)
	rate := eps / (2 * delta)
	var t float64
	if trimmed {
		t = math.Log(float64(len(counts))) / rate
	}
	var n int64
	for _, c := range counts {
		n += c
	}
	h := 1 + t*(1-2*p) + p*float64(n-1)
	probs := make([]float64, len(counts))
	var below int64
	var z float64
	for b, c := range counts {
		d := max(0, float64(below+1)-h, h-float64(below+c))
		probs[b] = math.Exp(-rate * d)
		z += probs[b]
		below += c
	}
	for b := range probs {
		probs[b] /= z
	}
	return probs
}

func maxLogRatio(a, b []float64) float64 {
	var l float64
	for i := range a {
		l = max(l, math.Abs(math.Log(a[i]/b[i])))
	}
	return l
}

func TestNewQuantileRejectsBadArguments(t *testing.T) {
	for _, c := range []struct {
		eps, lower, upper float64
		bins, rows        int
		want              string
	}{
		{0, 0, 1, 10, 1, "epsilon must be positive"},
		{1, 1, 1, 10, 1, "lower < upper, got [1, 1]"},
		{1, 0, math.Inf(1), 10, 1, "finite"},
		{1, math.NaN(), 1, 10, 1, "finite"},
		{1, -math.MaxFloat64, math.MaxFloat64, 10, 1, "too far apart"},
		{1, 0, 1, 0, 1, "bins must be in [1, 1048576], got 0"},
		{1, 0, 1, 10, 0, "rows per unit must be in [1, 134217728], got 0"},
		{1e-20, 0, 1, 10, 1, "outside the supported range"},
		{1e9, 0, 1, 10, 1, "outside the supported range"},
	} {
		_, err := NewQuantile(c.eps, c.lower, c.upper, c.bins, c.rows)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewQuantile(%v, %v, %v, %d, %d): error %v, want %q", c.eps, c.lower, c.upper, c.bins, c.rows, err, c.want)
		}
	}
	q := mustQuantile(t, 1, 0, 10, 5, 1)
	for _, c := range []struct {
		counts []int64
		p      float64
		want   string
	}{
		{[]int64{1, 2, 3}, 0.5, "has 3 bins, want 5"},
		{[]int64{1, 2, -3, 0, 0}, 0.5, "bin 2 has negative count -3"},
		{[]int64{1, 2, 3, 0, 0}, 1.5, "p must be in [0, 1], got 1.5"},
		{[]int64{1, 2, 3, 0, 0}, math.NaN(), "got NaN"},
		{[]int64{1 << 37, 1 << 37, 0, 0, 0}, 0.5, "2^38 rows"},
		{[]int64{math.MaxInt64, math.MaxInt64, 0, 0, 0}, 0.5, "2^38 rows"},
	} {
		if _, err := q.Release(c.counts, c.p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Release(%v, %v): error %v, want %q", c.counts, c.p, err, c.want)
		}
	}
}

func TestQuantileBinsAndEdges(t *testing.T) {
	q := mustQuantile(t, 1, -10, 10, 4, 1)
	if q.Bins() != 4 || q.BinWidth() != 5 || q.Epsilon() != 1 {
		t.Errorf("Bins, BinWidth, Epsilon = %d, %v, %v", q.Bins(), q.BinWidth(), q.Epsilon())
	}
	for x, want := range map[float64]int{-11: 0, -10: 0, -5.01: 0, -5: 1, 0: 2, 9.99: 3, 10: 3, 1e9: 3} {
		if got := q.Bin(x); got != want {
			t.Errorf("Bin(%v) = %d, want %d", x, got, want)
		}
	}
	if q.Bin(math.NaN()) != 0 {
		t.Error("Bin(NaN) is not 0")
	}
}

// The integer encoding samples the distribution the definition describes.
func TestQuantileEncodesTheDefinition(t *testing.T) {
	for _, c := range []struct {
		eps    float64
		rows   int
		p      float64
		counts []int64
	}{
		{1, 1, 0.5, []int64{3, 0, 1, 4, 4, 0, 2, 9}},
		{0.3, 4, 0.9, []int64{10, 20, 30, 0, 0, 5, 0, 1}},
		{2, 2, 0, []int64{0, 0, 0, 7, 3, 1, 0, 0, 0, 0, 0, 0}},
		{1, 1, 1, []int64{0, 5, 3, 1, 0, 0}},
		{0.1, 1, 0.37, []int64{0, 0, 0}},
		{10, 3, 0.5, []int64{100, 200, 300, 400, 500}},
	} {
		q := mustQuantile(t, c.eps, 0, 1, len(c.counts), c.rows)
		got, want := implProbs(t, q, c.counts, c.p), definitionProbs(c.eps, c.rows, c.counts, c.p)
		for b := range got {
			// Bins more than X = 128 nats from the best are capped there.
			if math.Abs(got[b]-want[b]) > 1e-6*want[b]+1e-50 {
				t.Errorf("%+v: bin %d probability %.9g, definition %.9g", c, b, got[b], want[b])
			}
		}
	}
}

// forNeighbours calls f for every histogram with bins entries in 0…maxCount
// and every histogram with rows more rows in total spread over it (one
// privacy unit added).
func forNeighbours(bins int, maxCount int64, rows int, f func(d, d2 []int64)) {
	d := make([]int64, bins)
	var add func(left, from int, d2 []int64)
	add = func(left, from int, d2 []int64) {
		if left == 0 {
			f(d, d2)
			return
		}
		for j := from; j < bins; j++ {
			d2[j]++
			add(left-1, j, d2)
			d2[j]--
		}
	}
	var fill func(i int)
	fill = func(i int) {
		if i == bins {
			for r := 1; r <= rows; r++ {
				add(r, 0, slices.Clone(d))
			}
			return
		}
		for v := int64(0); v <= maxCount; v++ {
			d[i] = v
			fill(i + 1)
		}
	}
	fill(0)
}

// An exhaustive check of the sensitivity argument on small histograms: the
// exact privacy loss of the implemented distributions never exceeds ε for any
// unit of at most maxRows rows, and exceeds it when the unit brings more
// rows than the mechanism was told (so the check can fail).
func TestQuantileExactLossWithinEpsilon(t *testing.T) {
	const eps = 1.0
	for _, rows := range []int{1, 2} {
		for _, p := range []float64{0, 0.3, 0.5, 0.8, 1} {
			q := mustQuantile(t, eps, 0, 1, 5, rows)
			var worst float64
			forNeighbours(5, 2, rows, func(d, d2 []int64) {
				worst = max(worst, maxLogRatio(implProbs(t, q, d, p), implProbs(t, q, d2, p)))
			})
			if worst > eps {
				t.Errorf("maxRows %d, p %v: exact privacy loss %.6f exceeds ε = %v", rows, p, worst, eps)
			}
			if worst < 0.6*eps {
				t.Errorf("maxRows %d, p %v: exact privacy loss only %.3f: the check has no power", rows, p, worst)
			}
			under := mustQuantile(t, eps, 0, 1, 5, 1)
			var broken float64
			forNeighbours(5, 2, 3, func(d, d2 []int64) {
				broken = max(broken, maxLogRatio(implProbs(t, under, d, p), implProbs(t, under, d2, p)))
			})
			if broken <= eps {
				t.Errorf("p %v: units of 3 rows against maxRows 1 lose only %.3f ≤ ε", p, broken)
			}
		}
	}
}

// chiSquareCategories is Pearson's test of observed counts against
// probabilities, merging categories expecting fewer than 20 into the last
// kept one; it returns the p-value.
func chiSquareCategories(t *testing.T, observed []int, probs []float64) float64 {
	t.Helper()
	var n int
	for _, o := range observed {
		n += o
	}
	var stat, accP, accO float64
	cats := 0
	flush := func() {
		e := accP * float64(n)
		stat += (accO - e) * (accO - e) / e
		cats++
		accP, accO = 0, 0
	}
	for i := range probs {
		accP += probs[i]
		accO += float64(observed[i])
		if accP*float64(n) >= 20 {
			flush()
		}
	}
	if accP > 0 {
		flush()
	}
	if cats < 2 {
		t.Fatal("chiSquareCategories: fewer than two categories")
	}
	return distuv.ChiSquared{K: float64(cats - 1)}.Survival(stat)
}

// The sampler draws exactly from exp(−c·D_b) (up to what 100,000 draws can
// tell): a chi-square test against the implementation's own probabilities,
// which must reject the distribution at twice the ε.
func TestQuantileSamplerGoodnessOfFit(t *testing.T) {
	const draws = 100_000
	for _, c := range []struct {
		eps    float64
		rows   int
		p      float64
		counts []int64
	}{
		{1, 1, 0.5, []int64{1, 0, 2, 0, 0, 1, 0, 0, 3, 0, 0, 1}},
		{0.5, 3, 0.9, []int64{5, 5, 5, 5, 0, 0, 0, 0, 0, 0, 9, 9, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 2}},
	} {
		t.Run(fmt.Sprintf("p=%v", c.p), func(t *testing.T) {
			q := mustQuantile(t, c.eps, 0, 1, len(c.counts), c.rows)
			observed := make([]int, len(c.counts))
			for range draws {
				b, err := q.releaseBin(c.counts, c.p)
				if err != nil {
					t.Fatal(err)
				}
				observed[b]++
			}
			if pv := chiSquareCategories(t, observed, implProbs(t, q, c.counts, c.p)); pv < testAlpha {
				t.Errorf("bins drawn %v: chi-square p-value %.3g < %g", observed, pv, testAlpha)
			}
			wrong := mustQuantile(t, 2*c.eps, 0, 1, len(c.counts), c.rows)
			if pv := chiSquareCategories(t, observed, implProbs(t, wrong, c.counts, c.p)); pv >= testAlpha {
				t.Errorf("bins drawn %v pass as the distribution at 2ε: p-value %.3g", observed, pv)
			}
		})
	}
}

// The empirical audit of audit_test.go on neighbouring histograms whose exact
// loss is 0.84ε (one row at the bottom; the neighbour adds one at the top),
// and on the mechanism with ε doubled in its weights, whose loss is 1.5ε.
func TestAuditQuantile(t *testing.T) {
	const eps = 1.0
	d := []int64{1, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	d2 := []int64{1, 0, 0, 0, 0, 0, 0, 0, 0, 1}
	release := func(q *Quantile, counts []int64) func() float64 {
		return func() float64 {
			y, err := q.Release(counts, 0.5)
			if err != nil {
				t.Fatal(err)
			}
			return y
		}
	}
	for _, weightEps := range []float64{eps, 2 * eps} {
		q := mustQuantile(t, weightEps, 0, 100, len(d), 1)
		nb := neighbours{
			name: fmt.Sprintf("MEDIAN with ε=%v in the weights", weightEps),
			d:    release(q, d), d2: release(q, d2),
			bin: func(y float64) int64 { return int64(q.Bin(y)) },
		}
		lower, point := auditLowerBound(t, nb)
		switch {
		case weightEps == eps && lower > eps:
			t.Errorf("%s: measured privacy loss ≥ %.3f (estimate %.3f) exceeds ε=%v", nb.name, lower, point, eps)
		case weightEps != eps && lower <= eps:
			t.Errorf("%s: measured loss lower bound %.3f (estimate %.3f) does not exceed the claimed ε=%v", nb.name, lower, point, eps)
		}
		t.Logf("%s: loss estimate %.3f, lower bound %.3f", nb.name, point, lower)
	}
}

// normalHistogram bins n values at the i/(n+1) quantiles of N(mean, sd),
// clamped to the Quantile's bounds, and returns the counts and sorted values.
func normalHistogram(q *Quantile, n int, mean, sd float64) ([]int64, []float64) {
	dist := distuv.Normal{Mu: mean, Sigma: sd}
	counts := make([]int64, q.Bins())
	values := make([]float64, n)
	for i := range values {
		v := min(max(dist.Quantile(float64(i+1)/float64(n+1)), q.lower), q.upper)
		values[i] = v
		counts[q.Bin(v)]++
	}
	return counts, values
}

// percentileCont is PostgreSQL's PERCENTILE_CONT of sorted values.
func percentileCont(sorted []float64, p float64) float64 {
	pos := p * float64(len(sorted)-1)
	i := int(math.Floor(pos))
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (pos-float64(i))*(sorted[i+1]-sorted[i])
}

func TestQuantileMedianAccuracy(t *testing.T) {
	q := mustQuantile(t, 1, 0, 100, 100, 1)
	counts, values := normalHistogram(q, 10_000, 50, 10)
	median := percentileCont(values, 0.5)
	// Rank error at confidence 1 − 1e-9 is about 26 ranks; the bins near
	// the median hold about 400 values, so every release must be in the
	// median's bin or a neighbour.
	r := q.RankError(0.5, 1-1e-9)
	if mb := q.Bin(median); r > float64(min(counts[mb-1], counts[mb+1])) {
		t.Fatalf("rank error %v exceeds the neighbouring bins' counts %v", r, counts[mb-1:mb+2])
	}
	for range 100 {
		y, err := q.Release(counts, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(y-median) > 2*q.BinWidth() {
			t.Errorf("DP median %v of N(50, 10) data is more than one bin from the true %v", y, median)
		}
	}
}

// MIN and MAX land near the data's extremes: the trim keeps them out of the
// empty bins beyond the data (12 at each end here), where the untrimmed
// mechanism goes most of the time.
func TestQuantileMinMaxAccuracy(t *testing.T) {
	const releases = 400
	q := mustQuantile(t, 1, 0, 100, 100, 1)
	counts, values := normalHistogram(q, 10_000, 50, 10)
	for _, p := range []float64{0, 1} {
		beyond := func(probs []float64) (mass float64) {
			for b, pb := range probs {
				if b < q.Bin(values[0]) || b > q.Bin(values[len(values)-1]) {
					mass += pb
				}
			}
			return mass
		}
		if untrimmed, trimmed := beyond(trimmedProbs(1, 1, counts, p, false)), beyond(implProbs(t, q, counts, p)); untrimmed < 0.5 || trimmed > 0.1 {
			t.Errorf("p=%v: mass beyond the data %.3f untrimmed, %.3f trimmed", p, untrimmed, trimmed)
		} else {
			t.Logf("p=%v: mass beyond the data %.3f untrimmed, %.3f trimmed", p, untrimmed, trimmed)
		}
		r := q.RankError(p, 0.99)
		// Releases should fall between the bin of the extreme value (or
		// the one beyond) and the bin of the value r ranks inward.
		lo, hi := q.Bin(values[0])-1, q.Bin(values[int(math.Ceil(r))])
		if p == 1 {
			lo, hi = q.Bin(values[len(values)-1-int(math.Ceil(r))]), q.Bin(values[len(values)-1])+1
		}
		outside := 0
		for range releases {
			y, err := q.Release(counts, p)
			if err != nil {
				t.Fatal(err)
			}
			if b := q.Bin(y); b < lo || b > hi {
				outside++
			}
		}
		// About 5% of releases fall in the empty bins beyond the data.
		if outside > releases/5 {
			t.Errorf("p=%v: %d/%d releases outside bins [%d, %d] (rank error %.1f)", p, outside, releases, lo, hi, r)
		}
		t.Logf("p=%v: %d/%d releases outside bins [%d, %d] (data in bins [%d, %d])", p, outside, releases, lo, hi, q.Bin(values[0]), q.Bin(values[len(values)-1]))
	}
}

// The rank error and the value interval cover at least the stated share of
// releases, on small data where the error is visible; radius ½ (the rank
// error without the mechanism's term) must not.
func TestQuantileRankErrorCoverage(t *testing.T) {
	const releases, confidence = 4000, 0.9
	q := mustQuantile(t, 0.5, 0, 20, 20, 1)
	var values []float64
	counts := make([]int64, q.Bins())
	for i := range 25 {
		v := 20 * math.Mod(float64(i)*0.618034, 1) * math.Mod(float64(i)*0.414214, 1)
		values = append(values, v)
		counts[q.Bin(v)]++
	}
	slices.Sort(values)
	for _, p := range []float64{0, 0.1, 0.5, 1} {
		r := q.RankError(p, confidence)
		truth := percentileCont(values, p)
		h := 1 + p*float64(len(values)-1)
		rankHits, valueHits, tightHits := 0, 0, 0
		for range releases {
			y, err := q.Release(counts, p)
			if err != nil {
				t.Fatal(err)
			}
			b := q.Bin(y)
			var below int64
			for _, c := range counts[:b] {
				below += c
			}
			dist := max(0, float64(below+1)-h, h-float64(below+counts[b]))
			if dist <= r {
				rankHits++
			}
			if dist <= 0.5 {
				tightHits++
			}
			in, err := q.ValueInterval(counts, p, y, r)
			if err != nil {
				t.Fatal(err)
			}
			if in.Contains(truth) {
				valueHits++
			}
		}
		for name, hits := range map[string]int{"rank": rankHits, "value": valueHits} {
			if _, hi := clopperPearson(hits, releases, testAlpha); hi < confidence {
				t.Errorf("p=%v: %s interval (rank error %.2f) covered %d/%d < %v", p, name, r, hits, releases, confidence)
			}
		}
		if lo, _ := clopperPearson(tightHits, releases, testAlpha); lo >= confidence {
			t.Errorf("p=%v: radius ½ covered %d/%d: the coverage check has no power", p, tightHits, releases)
		}
		t.Logf("p=%v: rank error %.2f, rank coverage %.3f, value coverage %.3f, radius-½ coverage %.3f", p, r,
			float64(rankHits)/releases, float64(valueHits)/releases, float64(tightHits)/releases)
	}
}

func TestQuantileRankErrorEdges(t *testing.T) {
	q := mustQuantile(t, 1, 0, 1, 100, 1)
	for _, c := range []struct{ p, conf float64 }{{0.5, 0}, {0.5, 1}, {2, 0.9}, {0.5, math.NaN()}} {
		if r := q.RankError(c.p, c.conf); !math.IsNaN(r) {
			t.Errorf("RankError(%v, %v) = %v, want NaN", c.p, c.conf, r)
		}
	}
	if r := q.RankError(0.5, math.Nextafter(1, 0)); !(r > 0 && r < 120) {
		t.Errorf("RankError at the largest confidence below 1 = %v, want finite", r)
	}
	// The median needs no trim and half the sensitivity of MIN: at the
	// same confidence its error is less than half.
	if med, mn := q.RankError(0.5, 0.95), q.RankError(0, 0.95); !(med < mn/2) {
		t.Errorf("RankError: median %v, min %v", med, mn)
	}
	one := mustQuantile(t, 1, 0, 1, 1, 1)
	if r := one.RankError(0.3, 0.95); r != 0.5 {
		t.Errorf("one bin: RankError = %v, want ½", r)
	}
	if in, err := q.ValueInterval(make([]int64, 100), 0.5, 0.3, 2); err != nil || in != (Interval{0, 1}) {
		t.Errorf("ValueInterval of an empty histogram = %v, %v; want [0, 1]", in, err)
	}
	if _, err := q.ValueInterval(make([]int64, 3), 0.5, 0.3, 2); err == nil {
		t.Error("ValueInterval accepted a histogram of the wrong length")
	}
}

func TestQuantileEmptyHistogramIsUniform(t *testing.T) {
	q := mustQuantile(t, 1, -5, 5, 10, 1)
	var low, high int
	for range 2000 {
		y, err := q.Release(make([]int64, 10), 0.5)
		if err != nil {
			t.Fatal(err)
		}
		if y < -5 || y > 5 {
			t.Fatalf("release %v outside [-5, 5]", y)
		}
		if y < 0 {
			low++
		} else {
			high++
		}
	}
	if lo, hi := clopperPearson(low, low+high, testAlpha); lo > 0.5 || hi < 0.5 {
		t.Errorf("empty histogram: %d releases below 0 and %d above, not uniform", low, high)
	}
}
