package mechanism

import (
	"math"
	"testing"
)

func onGrid(v, g float64) bool {
	q := v / g
	return !math.IsInf(v, 0) && !math.IsNaN(v) && q == math.Trunc(q)
}

func TestReleasesLieOnTheGrid(t *testing.T) {
	laplace1, _ := NewLaplace(1, 1)
	laplaceOdd, _ := NewLaplace(0.37, 0.3)
	laplaceHuge, _ := NewLaplace(1e-3, 1<<40) // b = 2^50, γ = 2^10
	gauss1, _ := NewGaussian(1, 1e-6, 1)
	gaussOdd, _ := NewGaussian(0.2, 1e-9, 123.456)
	gaussHuge, _ := NewGaussian(1, 1e-6, 1<<40) // γ ≥ 2^17
	inputs := []float64{0, 0.1, 1.0 / 3, -12345.678, 1e15 + 0.5, -1e300, 5e-324, math.Pi * 1e7}
	for _, m := range []Mechanism{laplace1, laplaceOdd, laplaceHuge, gauss1, gaussOdd, gaussHuge} {
		g := m.Granularity()
		if frac, _ := math.Frexp(g); frac != 0.5 {
			t.Errorf("%s: granularity %v is not a power of two", m.Name(), g)
		}
		for _, x := range inputs {
			for range 200 {
				if v := m.AddNoise(x); !onGrid(v, g) {
					t.Fatalf("%s(scale %v).AddNoise(%v) = %v is not a multiple of %v", m.Name(), m.Scale(), x, v, g)
				}
			}
		}
		intGrid := int64(math.Max(1, g))
		for _, x := range []int64{0, 7, -1001, 1 << 50, math.MaxInt64 - 3} {
			for range 200 {
				if v := m.AddNoiseInt(x); v%intGrid != 0 && v != math.MaxInt64 && v != math.MinInt64 {
					t.Fatalf("%s.AddNoiseInt(%d) = %d is not a multiple of %d", m.Name(), x, v, intGrid)
				}
			}
		}
	}
	if laplaceHuge.Granularity() != 1024 || gaussHuge.Granularity() < 1<<17 {
		t.Errorf("granularities %v and %v, want 2^10 and ≥ 2^17", laplaceHuge.Granularity(), gaussHuge.Granularity())
	}
}

func TestNonFiniteInputYieldsNaN(t *testing.T) {
	l, _ := NewLaplace(1, 1)
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if v := l.AddNoise(x); !math.IsNaN(v) {
			t.Errorf("AddNoise(%v) = %v, want NaN", x, v)
		}
	}
}

func TestCeilPowerOfTwo(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{
		{1, 1}, {0.75, 1}, {3, 4}, {4, 4}, {0x1p-40, 0x1p-40}, {0x1.0000000000001p-40, 0x1p-39}, {1e-300, 0x1p-996},
	} {
		if got := ceilPowerOfTwo(c.in); got != c.want {
			t.Errorf("ceilPowerOfTwo(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestRoundToGrid(t *testing.T) {
	for _, c := range []struct{ x, g, want float64 }{
		{0.3, 0.25, 0.25}, {0.375, 0.25, 0.5}, {-0.3, 0.25, -0.25}, {1e17 + 16, 1, 1e17 + 16}, {5, 8, 8}, {3, 8, 0},
	} {
		if got := roundToGrid(c.x, c.g); got != c.want {
			t.Errorf("roundToGrid(%v, %v) = %v, want %v", c.x, c.g, got, c.want)
		}
	}
}

func TestAddOnIntGrid(t *testing.T) {
	for _, c := range []struct {
		x     int64
		shift uint
		k     int64
		want  int64
	}{
		{5, 0, 3, 8},
		{5, 2, 1, 8},   // 5 rounds to 4, plus one step
		{6, 2, 0, 8},   // half rounds up
		{-6, 2, 0, -4}, // −1.5 steps rounds up to −1 step
		{-7, 2, -1, -12},
		{math.MaxInt64, 0, 5, math.MaxInt64},
		{math.MinInt64, 0, -5, math.MinInt64},
		{math.MaxInt64 - 1, 4, 1, math.MaxInt64},
		{0, 4, math.MaxInt64 >> 4, (math.MaxInt64 >> 4) << 4},
	} {
		if got := addOnIntGrid(c.x, c.shift, c.k); got != c.want {
			t.Errorf("addOnIntGrid(%d, %d, %d) = %d, want %d", c.x, c.shift, c.k, got, c.want)
		}
	}
}
