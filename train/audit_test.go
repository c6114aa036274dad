package train

import (
	"context"
	"math"
	"slices"
	"strconv"
	"testing"
)

// auditData is a small one-feature data set; the neighbour leaves out the
// last row, a negative among positives, whose loss gradient is largest when
// the model leans positive (add/remove, the relation Fit is ε-DP for).
func auditData(t *testing.T, withLast bool) *Data {
	e, err := NewEncoder([]Feature{{Name: "x", Numeric: true, Lower: 0, Upper: 1}})
	if err != nil {
		t.Fatal(err)
	}
	d := NewData(e, 0)
	for i := range 10 {
		if err := d.Add([]any{float64(i%2) / 2}, i < 8); err != nil {
			t.Fatal(err)
		}
	}
	if withLast {
		if err := d.Add([]any{1.0}, false); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// auditCategorical is the same kind of pair with one categorical feature of
// ten public values: its rows are sparse (K² = 2, dimension 11), so Fit draws
// the objective's noise with independent Laplace coordinates (the ℓ1 norm,
// see objectiveNoise). The left-out row, a negative, has category "c0", so
// its gradient moves the noise along the coordinates of c0 and the bias.
func auditCategorical(t *testing.T, withLast bool) *Data {
	cats := make([]string, 10)
	for i := range cats {
		cats[i] = "c" + strconv.Itoa(i)
	}
	e, err := NewEncoder([]Feature{{Name: "g", Categories: cats}})
	if err != nil {
		t.Fatal(err)
	}
	d := NewData(e, 0)
	for i := range 10 {
		if err := d.Add([]any{cats[i%3]}, i < 8); err != nil {
			t.Fatal(err)
		}
	}
	if withLast {
		if err := d.Add([]any{"c0"}, false); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// auditCase is a pair of neighbouring data sets and the statistic of the
// released raw weights along which the left-out row moves them.
type auditCase struct {
	data func(t *testing.T, withLast bool) *Data
	stat func(w []float64) float64
	// resample calls data before every fit (a sampled Data draws its
	// sample as the rows are added).
	resample bool
}

var (
	// The projection on the left-out row's direction x_z ∝ (1, 1), along
	// which its gradient moves the noise b.
	numericAudit = auditCase{data: auditData, stat: func(w []float64) float64 { return (w[0] + w[1]) / math.Sqrt2 }}
	// c0's weight plus the bias's: both coordinates the left-out row moves.
	categoricalAudit = auditCase{data: auditCategorical, stat: func(w []float64) float64 { return w[0] + w[len(w)-1] }}
)

// empiricalLoss releases the weights of trials fits on each of the two
// neighbouring data sets and returns the largest privacy loss
// |log(P[bin | D]/P[bin | D'])| over equal-mass bins, each lowered by 4
// standard errors of the log-ratio of two binomial counts
// (√(1/a + 1/b), the delta method), so that sampling noise alone does not
// exceed ε.
func empiricalLoss(t *testing.T, c auditCase, opts Options, trials int) (loss, raw float64) {
	var samples [2][]float64
	for k, with := range []bool{true, false} {
		d := c.data(t, with)
		for range trials {
			if c.resample {
				d = c.data(t, with)
			}
			m, err := Fit(context.Background(), d, opts)
			if err != nil {
				t.Fatal(err)
			}
			samples[k] = append(samples[k], c.stat(m.RawWeights))
		}
	}
	pooled := slices.Concat(samples[0], samples[1])
	slices.Sort(pooled)
	const bins = 24
	edges := make([]float64, bins-1)
	for b := range edges {
		edges[b] = pooled[(b+1)*len(pooled)/bins]
	}
	var counts [2][bins]float64
	for k := range samples {
		for _, v := range samples[k] {
			b, _ := slices.BinarySearch(edges, v)
			counts[k][b]++
		}
	}
	loss = math.Inf(-1)
	for b := range bins {
		a, c := counts[0][b], counts[1][b]
		if a < 30 || c < 30 {
			continue // too few to say anything; the tails are summed into the outer bins anyway
		}
		r := math.Abs(math.Log(a / c))
		raw = max(raw, r)
		loss = max(loss, r-4*math.Sqrt(1/a+1/c))
	}
	return loss, raw
}

// TestPrivacyAudit measures the privacy loss of the released weights on two
// neighbouring data sets. The objective's noise is what the analysis asks
// for, so the measured loss stays within ε; with the noise divided by 3 the
// same audit must see the loss exceed ε, showing that it can fail.
func TestPrivacyAudit(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical audit")
	}
	const eps = 1.0
	// λ = 0.1 with N = 10 keeps ε' > 0 (log(1 + c/(Nλ)) ≈ 0.22), so the
	// shift of the noise carries most of the loss and the audit is sharp.
	opts := Options{Epsilon: eps, Lambda: 0.1, PublicRows: 10}
	for _, c := range []struct {
		name  string
		audit auditCase
	}{{"objective, ℓ2 noise", numericAudit}, {"objective, ℓ1 noise", categoricalAudit}} {
		loss, raw := empiricalLoss(t, c.audit, opts, 16000)
		t.Logf("%s: privacy loss ≥ %.3f (point estimate %.3f) for ε = %v", c.name, loss, raw, eps)
		if loss > eps {
			t.Errorf("%s: measured privacy loss %.3f exceeds ε = %v", c.name, loss, eps)
		}
		weak := opts
		weak.weaken = 3
		wloss, wraw := empiricalLoss(t, c.audit, weak, 16000)
		t.Logf("%s with the noise ÷3: privacy loss ≥ %.3f (point estimate %.3f)", c.name, wloss, wraw)
		if wloss <= eps {
			t.Errorf("%s: with the noise divided by 3 the audit measured %.3f ≤ ε = %v; it cannot detect a broken calibration", c.name, wloss, eps)
		}
	}

	// The default path releases the label histogram (twice, as N·ε is small
	// here) and fits with its N and offset: the left-out negative moves the
	// counts, hence the intercept, as well as the objective. The whole fit
	// must stay within ε; the intercept carries both effects.
	def := Options{Epsilon: eps, Lambda: 0.1}
	intercept := auditCase{data: auditData, stat: func(w []float64) float64 { return w[len(w)-1] }}
	loss, raw := empiricalLoss(t, intercept, def, 16000)
	t.Logf("objective with the label histogram: privacy loss ≥ %.3f (point estimate %.3f) for ε = %v", loss, raw, eps)
	if loss > eps {
		t.Errorf("objective with the label histogram: measured privacy loss %.3f exceeds ε = %v", loss, eps)
	}
	// Without a λ, λ is set from the released N: the left-out row moves it
	// too.
	loss, raw = empiricalLoss(t, intercept, Options{Epsilon: eps}, 16000)
	t.Logf("objective with the default λ: privacy loss ≥ %.3f (point estimate %.3f) for ε = %v", loss, raw, eps)
	if loss > eps {
		t.Errorf("objective with the default λ: measured privacy loss %.3f exceeds ε = %v", loss, eps)
	}

	// Output perturbation's bound 1/(Nλ) is not attained (the Hessian exceeds
	// λ), so its audit only checks the upper side.
	opts.Method = MethodOutput
	loss, raw = empiricalLoss(t, numericAudit, opts, 8000)
	t.Logf("output: privacy loss ≥ %.3f (point estimate %.3f) for ε = %v", loss, raw, eps)
	if loss > eps {
		t.Errorf("output: measured privacy loss %.3f exceeds ε = %v", loss, eps)
	}
}
