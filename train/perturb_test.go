package train

import (
	"context"
	"math"
	"testing"
)

// TestSampleLaplace checks the ℓ1 noise against its law: each coordinate is
// Laplace with scale 1/rate, so |b_j|·rate is Exp(1) (mean 1, variance 1)
// and the sign is a fair coin.
func TestSampleLaplace(t *testing.T) {
	const rate, dim, draws = 4.0, 50, 400
	var sum, sumSq float64
	var positive int
	for range draws {
		for _, v := range sampleLaplace(dim, rate) {
			a := math.Abs(v) * rate
			sum += a
			sumSq += a * a
			if v > 0 {
				positive++
			}
		}
	}
	n := float64(dim * draws)
	mean := sum / n
	variance := sumSq/n - mean*mean
	// 5 standard errors: Exp(1) has variance 1; the sign count's is n/4.
	if math.Abs(mean-1) > 5/math.Sqrt(n) {
		t.Errorf("mean |b|·rate = %.4f, want 1 ± %.4f", mean, 5/math.Sqrt(n))
	}
	if math.Abs(variance-1) > 5*math.Sqrt(8/n) { // Var of (Exp(1))² is 20; of the sample variance about 8/n
		t.Errorf("variance of |b|·rate = %.4f, want 1", variance)
	}
	if math.Abs(float64(positive)-n/2) > 5*math.Sqrt(n/4) {
		t.Errorf("%d of %v coordinates positive, want half", positive, n)
	}
}

// TestObjectiveNoiseNorm checks the public choice of the noise's norm and
// the reason for it: on Adult's sparse rows the ℓ1 noise is about half the
// ℓ2 noise along every row, at the same ε'; random Fourier features keep ℓ2.
func TestObjectiveNoiseNorm(t *testing.T) {
	d := adultData(t, 2000)
	des := linearDesign{d: d}
	if k := des.l1Bound(); math.Abs(k-math.Sqrt(14)) > 1e-6 {
		t.Errorf("Adult's ℓ1 bound is %v, want √14 (5 numeric, 8 categorical, the bias)", k)
	}
	// The bound holds for every row.
	var cols []int32
	var vals []float64
	for i := range des.len() {
		cols, vals = des.row(i, cols, vals)
		var l1 float64
		for _, v := range vals {
			l1 += math.Abs(v)
		}
		if l1 > des.l1Bound() {
			t.Fatalf("row %d has ‖x‖₁ = %v over the bound %v", i, l1, des.l1Bound())
		}
	}
	const ePrime, draws = 1.0, 300
	along := func(b []float64) float64 {
		var s float64
		for i := range des.len() {
			cols, vals = des.row(i, cols, vals)
			var m float64
			for k, c := range cols {
				m += b[c] * vals[k]
			}
			s += m * m
		}
		return s / float64(des.len())
	}
	var l1, l2 float64
	for range draws {
		l1 += along(objectiveNoise(des, ePrime))
		l2 += along(sampleBall(des.dim(), ePrime))
	}
	ratio := math.Sqrt(l1 / l2)
	t.Logf("noise along Adult's rows: ℓ1 / ℓ2 = %.3f", ratio)
	if ratio > 0.6 {
		t.Errorf("the objective's noise along the rows is %.2f of the ℓ2 noise's, want about ½", ratio)
	}

	fm, err := newRFFMap(d.enc, RFFParams{Components: 50, Gamma: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	dense, err := fm.materialise(d)
	if err != nil {
		t.Fatal(err)
	}
	if dense.l1Bound() != 0 {
		t.Errorf("random features report an ℓ1 bound %v; they are dense and keep the ℓ2 noise", dense.l1Bound())
	}
}

func TestGridFor(t *testing.T) {
	for _, c := range []struct{ rate, want float64 }{
		{1, 1}, {0.5, 2}, {0.3, 4}, {3, 0.5}, {1000, 0x1p-9}, {math.Inf(1), 0},
	} {
		if got := gridFor(c.rate); got != c.want {
			t.Errorf("gridFor(%v) = %v, want %v", c.rate, got, c.want)
		}
	}
}

// TestReleasedWeightsOnGrid: every released raw weight is an integer
// multiple of the model's power-of-two grid, which is at least the scale of
// the last noise added (Mironov 2012); without privacy there is no grid.
func TestReleasedWeightsOnGrid(t *testing.T) {
	d := synthetic(t, 500, 8)
	for _, opts := range []Options{
		{Epsilon: 1, Lambda: 1e-2},
		{Epsilon: 0.1, Lambda: 1, Method: MethodOutput},
		{Epsilon: 1, AutoLambda: true},
		{Epsilon: 2, Lambda: 1e-2, Kernel: &RFFOptions{Components: 20, Gamma: 1}},
	} {
		m, err := Fit(context.Background(), d, opts)
		if err != nil {
			t.Fatal(err)
		}
		if frac, _ := math.Frexp(m.Grid); !(m.Grid > 0) || frac != 0.5 {
			t.Errorf("%+v: grid %v is not a positive power of two", opts, m.Grid)
			continue
		}
		for j, w := range m.RawWeights {
			if q := w / m.Grid; q != math.Round(q) {
				t.Errorf("%+v: raw weight %d = %v is not a multiple of the grid %v", opts, j, w, m.Grid)
			}
		}
	}
	m, err := Fit(context.Background(), d, Options{Epsilon: math.Inf(1), Lambda: 1e-2})
	if err != nil {
		t.Fatal(err)
	}
	if m.Grid != 0 {
		t.Errorf("a non-private model has grid %v, want 0", m.Grid)
	}
}
