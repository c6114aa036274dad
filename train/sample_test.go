package train

import (
	"context"
	"math"
	"strings"
	"testing"
)

// sampledFit releases the label counts of rows (as a backend aggregate
// would), plans the sample for maxBytes, streams the rows through the coin
// and fits: the path the proxy takes.
func sampledFit(t testing.TB, enc *Encoder, values [][]any, labels []bool, opts Options, maxBytes int64) (*Model, *Data, *SamplePlan) {
	t.Helper()
	var pos, neg int64
	for _, l := range labels {
		if l {
			pos++
		} else {
			neg++
		}
	}
	rel, err := ReleaseLabels(pos, neg, enc, opts)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := PlanSample(enc, opts, maxBytes, rel)
	if err != nil {
		t.Fatal(err)
	}
	d := NewSampledData(enc, plan)
	for i, v := range values {
		if err := d.Add(v, labels[i]); err != nil {
			t.Fatalf("a sampled Add failed: %v", err)
		}
	}
	opts.Labels, opts.Sample = rel, plan
	m, err := Fit(context.Background(), d, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m, d, plan
}

// TestPlanSampleNumbers pins the margins of the plan (reported in the
// package's proof sketch) and the δ it adds.
func TestPlanSampleNumbers(t *testing.T) {
	enc, err := NewEncoder(adultFeatures(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		eps  float64
		k    int64
		n    int64
		minQ float64
	}{{1, 1000, 30000, 0.02}, {1, 100000, 30000, 1}, {0.1, 1000, 30000, 0.02}, {1, 1, 30000, 0}, {10, 30000, 30000, 0.9}} {
		rel, err := ReleaseLabels(c.n/4, c.n-c.n/4, enc, Options{Epsilon: c.eps})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := PlanSample(enc, Options{Epsilon: c.eps}, c.k*37, rel)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("ε=%v k=%d N̂=%.0f: t=%.0f μ*=%.1f q=%.5f ε₀=%.3f β=%.3g δ=%.3g", c.eps, c.k, rel.N(), plan.Margin, plan.Expected, plan.Rate, plan.Epsilon, plan.DropBound, plan.Delta)
		if plan.Cap != c.k || plan.Delta != DropDelta || !(plan.DropBound <= DropDelta/(1+math.Exp(c.eps))*(1+1e-9)) {
			t.Errorf("plan %+v", plan)
		}
		if plan.Rate < c.minQ || plan.Rate > 1 || plan.Expected >= float64(c.k+1) {
			t.Errorf("ε=%v k=%d: q=%v μ*=%v", c.eps, c.k, plan.Rate, plan.Expected)
		}
		if plan.Rate < 1 && !(plan.Epsilon > c.eps-rel.Epsilon) {
			t.Errorf("sampling at q=%v did not amplify: ε₀=%v", plan.Rate, plan.Epsilon)
		}
	}
	// The margin t bounds the release's shortfall: check the Chernoff bound
	// against the exact tail of one discrete Laplace pair by simulation
	// would need 1e12 draws; check instead that it exceeds the scale times
	// log(1/β), the tail of a single discrete Laplace variable.
	rel, _ := ReleaseLabels(10000, 20000, enc, Options{Epsilon: 1})
	logBeta := math.Log(1e-12)
	if tm, single := rel.shortfall(logBeta), rel.noise[0].scale*(-logBeta); tm < single {
		t.Errorf("shortfall %v is below one Laplace variable's tail %v", tm, single)
	}
}

// TestBinomialMean checks the Chernoff mean against exact binomial tails.
func TestBinomialMean(t *testing.T) {
	for _, k := range []int64{1, 10, 1000} {
		mu := binomialMean(k, math.Log(1e-6))
		// Binomial(n, μ/n) with n large ≈ Poisson(μ); the exact Poisson
		// tail P[X ≥ k] must be below 1e-6.
		var tail, term float64 = 0, math.Exp(-mu)
		for x := int64(0); x < k+200; x++ {
			if x >= k {
				tail += term
			}
			term *= mu / float64(x+1)
		}
		t.Logf("K=%d: μ*=%.4g, P[Poisson(μ*) ≥ K] = %.3g", k, mu, tail)
		if !(tail <= 1e-6) || !(mu < float64(k)) {
			t.Errorf("K=%d: μ*=%v has tail %v > 1e-6", k, mu, tail)
		}
	}
}

// TestSampledCapNeverFails is the oracle of issue 11: a memory cap of one row
// must not fail whether one row or many match. Every outcome is a model.
func TestSampledCapNeverFails(t *testing.T) {
	enc, err := NewEncoder(testFeatures())
	if err != nil {
		t.Fatal(err)
	}
	rb, _ := RowBytes(enc, nil)
	if _, err := RowCap(enc, nil, rb-1); err == nil || !strings.Contains(err.Error(), "holds no row") {
		t.Errorf("a cap below one row: %v", err)
	}
	for _, n := range []int{0, 1, 2, 50, 5000} {
		var values [][]any
		var labels []bool
		for i := range n {
			values = append(values, []any{30 + i%20, "Male", "not a number", int64(2)})
			labels = append(labels, i%3 == 0)
		}
		for _, kernel := range []*RFFOptions{nil, {Components: 20, Gamma: 0.5}} {
			rbk, _ := RowBytes(enc, kernel)
			m, d, plan := sampledFit(t, enc, values, labels, Options{Epsilon: 0.001, Kernel: kernel}, rbk)
			if d.Len() > 1 || plan.Cap != 1 || m.Sample == nil || m.Delta != DropDelta {
				t.Errorf("%d rows, cap one row: kept %d, plan %+v, model %+v", n, d.Len(), plan, m.Sample)
			}
		}
	}
}

// TestSampleMarginPreventsDrops: with the plan's margins the cap drops no
// row even when N is just above k (the bound is 2⁻⁴⁰; none in 300 runs),
// while sampling at the naive rate k/N̂ drops rows about half the time, which
// is what the margins are for.
func TestSampleMarginPreventsDrops(t *testing.T) {
	enc, err := NewEncoder(testFeatures())
	if err != nil {
		t.Fatal(err)
	}
	const k, n = 2000, 2100
	rb, _ := RowBytes(enc, nil)
	var naiveDrops, planDrops int
	const runs = 300
	for range runs {
		rel, err := ReleaseLabels(n/2, n/2, enc, Options{Epsilon: 1})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := PlanSample(enc, Options{Epsilon: 1}, k*rb, rel)
		if err != nil {
			t.Fatal(err)
		}
		naive := *plan
		naive.Rate = min(1, float64(k)/rel.N())
		for i, p := range []*SamplePlan{plan, &naive} {
			d := NewSampledData(enc, p)
			for j := range n {
				if err := d.Add([]any{30, "Male", 40, int64(1)}, j%2 == 0); err != nil {
					t.Fatal(err)
				}
			}
			if d.dropped > 0 {
				if i == 0 {
					planDrops++
				} else {
					naiveDrops++
				}
			}
		}
	}
	t.Logf("runs that dropped a row: %d of %d with the plan, %d with q = k/N̂", planDrops, runs, naiveDrops)
	if planDrops > 0 {
		t.Errorf("the plan's sample overflowed the cap in %d of %d runs", planDrops, runs)
	}
	if naiveDrops < runs/10 {
		t.Errorf("the naive rate overflowed in only %d of %d runs: the test does not exercise the cap", naiveDrops, runs)
	}
}

// TestSampledPrivacyAudit is the audit of audit_test.go on the sampled path:
// the released label counts are fixed (the audit measures the fit), the cap
// makes q about ½, and the fit is calibrated at the amplified ε₀ > ε_fit.
// The measured loss must stay within ε_fit; over-claiming the amplification
// (calibrating as if q were a hundredth of itself, a true loss of about 5)
// must be caught.
func TestSampledPrivacyAudit(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical audit")
	}
	const eps = 1.0
	enc, err := NewEncoder([]Feature{{Name: "x", Numeric: true, Lower: 0, Upper: 1}})
	if err != nil {
		t.Fatal(err)
	}
	// The same pair as auditData: ten rows, and a left-out negative.
	rows := func(withLast bool) ([][]any, []bool) {
		var v [][]any
		var l []bool
		for i := range 10 {
			v = append(v, []any{float64(i%2) / 2})
			l = append(l, i < 8)
		}
		if withLast {
			v = append(v, []any{1.0})
			l = append(l, false)
		}
		return v, l
	}
	// A fixed release (post-processing of nothing): N̂ = 10, its ε taken.
	rel := &LabelRelease{Pos: 8, Neg: 2, Epsilon: labelShare * eps, Total: eps}
	base := SamplePlan{Cap: 1 << 20, RowBytes: 5, MaxBytes: 5 << 20, Rate: 0.5, Total: eps}
	base.Rows = base.Rate * rel.N()
	stat := func(w []float64) float64 { return (w[0] + w[1]) / math.Sqrt2 }
	audit := func(plan SamplePlan, trials int) (float64, float64) {
		c := auditCase{
			data: func(t *testing.T, withLast bool) *Data {
				d := NewSampledData(enc, &plan)
				v, l := rows(withLast)
				for i := range v {
					if err := d.Add(v[i], l[i]); err != nil {
						t.Fatal(err)
					}
				}
				return d
			},
			stat:     stat,
			resample: true,
		}
		return empiricalLoss(t, c, Options{Epsilon: eps, Lambda: 0.1, Labels: rel, Sample: &plan}, trials)
	}
	fitEps := eps - rel.Epsilon
	ok := base
	ok.Epsilon = amplify(fitEps, ok.Rate)
	loss, raw := audit(ok, 40000)
	t.Logf("sampled at q=%.2f, ε₀=%.3f: privacy loss ≥ %.3f (point estimate %.3f) for ε_fit = %.3f", ok.Rate, ok.Epsilon, loss, raw, fitEps)
	if loss > fitEps {
		t.Errorf("sampled fit: measured privacy loss %.3f exceeds ε_fit = %.3f", loss, fitEps)
	}
	bad := base
	bad.Epsilon = amplify(fitEps, ok.Rate/100)
	wloss, wraw := audit(bad, 16000)
	t.Logf("amplification over-claimed (ε₀=%.3f): privacy loss ≥ %.3f (point estimate %.3f)", bad.Epsilon, wloss, wraw)
	if wloss <= fitEps {
		t.Errorf("over-claimed amplification measured %.3f ≤ ε_fit = %.3f: the audit cannot see it", wloss, fitEps)
	}
}

// TestAdultSmallCap: accuracy on Adult's test split as the memory cap
// shrinks, at ε = 1. The full set (32,561 rows, 37 bytes each) scores about
// 80–84%; the cap only costs rows, never an error.
func TestAdultSmallCap(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on Adult")
	}
	rows, err := adultTrain()
	if err != nil {
		t.Fatal(err)
	}
	enc, err := NewEncoder(adultFeatures(t))
	if err != nil {
		t.Fatal(err)
	}
	rb, _ := RowBytes(enc, nil)
	const reps = 3
	for _, k := range []int64{1 << 20, 16000, 4000, 1000, 100, 1} {
		var acc, kept float64
		for range reps {
			m, d, plan := sampledFit(t, enc, rows.values, rows.labels, Options{Epsilon: 1}, k*rb)
			acc += testAccuracy(t, m) / reps
			kept += float64(d.Len()) / reps
			if d.dropped > 0 {
				t.Errorf("cap %d rows: the sample overflowed (q=%v)", k, plan.Rate)
			}
		}
		t.Logf("cap %7d rows (%9d bytes): kept %6.0f rows, test accuracy %.3f", k, k*rb, kept, acc)
		switch {
		case k >= 16000 && acc < 0.80:
			t.Errorf("cap %d: accuracy %.3f, want ≥ 0.80", k, acc)
		case k >= 1000 && acc < 0.76:
			t.Errorf("cap %d: accuracy %.3f, want at least about the majority class", k, acc)
		}
	}
}
