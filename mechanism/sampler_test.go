package mechanism

import (
	"fmt"
	"math"
	"testing"
)

const gofSamples = 100_000

func drawN(n int, sample func(*bitSource) int64) []int64 {
	src := newTestSource()
	out := make([]int64, n)
	for i := range out {
		out[i] = sample(src)
	}
	return out
}

// binWidth keeps the number of chi-square bins near 100.
func binWidth(scale float64) int64 { return max(1, int64(scale/5)) }

func TestDiscreteLaplaceGoodnessOfFit(t *testing.T) {
	for _, b := range []float64{1, 2.5, 100} {
		t.Run(fmt.Sprintf("b=%v", b), func(t *testing.T) {
			d, err := newDiscreteLaplace(b)
			if err != nil {
				t.Fatal(err)
			}
			radius := int64(math.Ceil(12 * b))
			pmf := laplacePMF(b)
			if p := chiSquareGOF(t, drawN(gofSamples, d.sample), pmf, radius, binWidth(b)); p < testAlpha {
				t.Errorf("discrete Laplace b=%v: chi-square p-value %.3g < %g", b, p, testAlpha)
			}
			// The same test must reject a sampler with the wrong scale.
			wrong, err := newDiscreteLaplace(1.2 * b)
			if err != nil {
				t.Fatal(err)
			}
			if p := chiSquareGOF(t, drawN(gofSamples, wrong.sample), pmf, radius, binWidth(b)); p >= testAlpha {
				t.Errorf("discrete Laplace with scale 1.2·%v passed as scale %v: p-value %.3g", b, b, p)
			}
		})
	}
}

func TestDiscreteGaussianGoodnessOfFit(t *testing.T) {
	for _, sigma := range []float64{1, 10, 1000} {
		t.Run(fmt.Sprintf("sigma=%v", sigma), func(t *testing.T) {
			g, err := newDiscreteGaussian(sigma)
			if err != nil {
				t.Fatal(err)
			}
			radius := int64(math.Ceil(7 * sigma))
			pmf := gaussianPMF(sigma)
			if p := chiSquareGOF(t, drawN(gofSamples, g.sample), pmf, radius, binWidth(sigma)); p < testAlpha {
				t.Errorf("discrete Gaussian sigma=%v: chi-square p-value %.3g < %g", sigma, p, testAlpha)
			}
			wrong, err := newDiscreteGaussian(1.2 * sigma)
			if err != nil {
				t.Fatal(err)
			}
			if p := chiSquareGOF(t, drawN(gofSamples, wrong.sample), pmf, radius, binWidth(sigma)); p >= testAlpha {
				t.Errorf("discrete Gaussian with sigma 1.2·%v passed as sigma %v: p-value %.3g", sigma, sigma, p)
			}
		})
	}
}

// The public integer path at the scales a COUNT actually uses.
func TestMechanismIntGoodnessOfFit(t *testing.T) {
	for _, eps := range []float64{1, 0.4, 0.01} {
		l, err := NewLaplace(eps, 1)
		if err != nil {
			t.Fatal(err)
		}
		b := l.intNoise.scale()
		if math.Abs(b-1/eps) > 1e-6/eps {
			t.Errorf("Laplace(eps=%v, Δ=1) integer scale %v, want 1/eps", eps, b)
		}
		samples := drawN(gofSamples, func(*bitSource) int64 { return l.AddNoiseInt(1000) - 1000 })
		if p := chiSquareGOF(t, samples, laplacePMF(b), int64(12*b), binWidth(b)); p < testAlpha {
			t.Errorf("Laplace(eps=%v).AddNoiseInt: chi-square p-value %.3g", eps, p)
		}
	}
	g, err := NewGaussian(1, 1e-5, 1)
	if err != nil {
		t.Fatal(err)
	}
	sigma := g.intNoise.sigma()
	samples := drawN(gofSamples, func(*bitSource) int64 { return g.AddNoiseInt(-7) + 7 })
	if p := chiSquareGOF(t, samples, gaussianPMF(sigma), int64(7*sigma), 1); p < testAlpha {
		t.Errorf("Gaussian(1, 1e-5, 1).AddNoiseInt with sigma %v: chi-square p-value %.3g", sigma, p)
	}
}

// The float path's noise, in grid steps, at a realistic scale.
func TestGaussianGridNoiseMoments(t *testing.T) {
	g, err := NewGaussian(0.5, 1e-6, 3)
	if err != nil {
		t.Fatal(err)
	}
	const n = 50_000
	var sum, sumSq float64
	for range n {
		z := g.AddNoise(0) / g.Scale()
		sum += z
		sumSq += z * z
	}
	mean, variance := sum/n, sumSq/n
	// Standard errors: 1/√n for the mean, √(2/n) for the variance.
	if math.Abs(mean) > 5.5/math.Sqrt(n) || math.Abs(variance-1) > 5.5*math.Sqrt(2.0/n) {
		t.Errorf("AddNoise(0)/σ has mean %.4f and variance %.4f, want 0 and 1", mean, variance)
	}
}

func TestBernoulliExpNeg(t *testing.T) {
	big := mul64x64(1<<40, 1<<40) // 2^80, den beyond 64 bits
	cases := []struct {
		name     string
		num, den u128
		gamma    float64
	}{
		{"0", u128From(0), u128From(7), 0},
		{"0.3", u128From(3), u128From(10), 0.3},
		{"1", u128From(5), u128From(5), 1},
		{"2.7", u128From(27), u128From(10), 2.7},
		{"wide 3.25", mul64x64(13<<38, 1<<40), big, 3.25},
		{"wide 0.1", mul64x64(1<<40, (1<<40)/10), big, float64((1<<40)/10) / (1 << 40)},
	}
	const n = 200_000
	src := newTestSource()
	for _, c := range cases {
		k := 0
		for range n {
			if src.bernoulliExpNeg(c.num, c.den) {
				k++
			}
		}
		lo, hi := clopperPearson(k, n, testAlpha)
		if want := math.Exp(-c.gamma); want < lo || want > hi {
			t.Errorf("Bernoulli(exp(-%s)): %d/%d successes, interval [%.5f, %.5f] misses %.5f", c.name, k, n, lo, hi, want)
		}
	}
}

func TestUniform(t *testing.T) {
	src := newTestSource()
	const n = 60_000
	for _, m := range []uint64{1, 3, 10, 1<<63 + 12345} {
		counts := make([]int64, 3)
		for range n {
			v := src.uniform(m)
			if v >= m {
				t.Fatalf("uniform(%d) = %d", m, v)
			}
			counts[v*3/m]++ // thirds for large m (exact for m = 3)
		}
		if m == 3 {
			for i, c := range counts {
				if lo, hi := clopperPearson(int(c), n, testAlpha); 1.0/3 < lo || 1.0/3 > hi {
					t.Errorf("uniform(3) returned %d %d times of %d", i, c, n)
				}
			}
		}
	}
	wide := u128{hi: 5, lo: 17}
	for range 1000 {
		if v := src.uniform128(wide); !v.less(wide) {
			t.Fatalf("uniform128(%v) = %v", wide, v)
		}
	}
}

func TestU128(t *testing.T) {
	x := mul64x64(math.MaxUint64, math.MaxUint64) // 2^128 − 2^65 + 1
	if x.hi != math.MaxUint64-1 || x.lo != 1 {
		t.Fatalf("mul64x64(max, max) = %+v", x)
	}
	if _, over := x.mul64(2); !over {
		t.Error("mul64 did not report overflow")
	}
	y, over := u128From(1 << 63).mul64(4)
	if over || y.hi != 2 || y.lo != 0 {
		t.Errorf("2^63·4 = %+v (overflow %v)", y, over)
	}
	if d := y.sub(u128From(1)); d.hi != 1 || d.lo != math.MaxUint64 {
		t.Errorf("2^65 − 1 = %+v", d)
	}
	if y.bitLen() != 66 || u128From(0).bitLen() != 0 {
		t.Errorf("bitLen(2^65) = %d", y.bitLen())
	}
}

// newDiscreteGaussian's t must be exactly ⌊σ⌋ + 1 for σ² = n/d.
func TestDiscreteGaussianParameters(t *testing.T) {
	for _, sigma := range []float64{0.0625, 0.3, 1, 1.5, 3.7, 1000, 1 << 24, 0x1.6p25} {
		g, err := newDiscreteGaussian(sigma)
		if err != nil {
			t.Fatalf("sigma %v: %v", sigma, err)
		}
		if g.sigma() < sigma || g.sigma() > sigma*(1+1e-12) {
			t.Errorf("sigma %v represented as %v", sigma, g.sigma())
		}
		if want := uint64(math.Floor(g.sigma())) + 1; g.laplace.t != want {
			t.Errorf("sigma %v: t = %d, want %d", sigma, g.laplace.t, want)
		}
	}
	for _, sigma := range []float64{0.01, 1 << 26, math.NaN()} {
		if _, err := newDiscreteGaussian(sigma); err == nil {
			t.Errorf("newDiscreteGaussian(%v) accepted an unsupported sigma", sigma)
		}
	}
}
