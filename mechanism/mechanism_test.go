package mechanism

import (
	"math"
	"strings"
	"sync"
	"testing"
)

func TestConstructorsRejectBadArguments(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"laplace eps -1", second(NewLaplace(-1, 1)), "mechanism: epsilon must be positive and finite, got -1"},
		{"laplace eps 0", second(NewLaplace(0, 1)), "epsilon must be positive and finite, got 0"},
		{"laplace eps Inf", second(NewLaplace(inf, 1)), "got +Inf"},
		{"laplace eps NaN", second(NewLaplace(nan, 1)), "got NaN"},
		{"laplace sens 0", second(NewLaplace(1, 0)), "L1 sensitivity must be positive and finite, got 0"},
		{"laplace sens -2", second(NewLaplace(1, -2)), "got -2"},
		{"laplace huge eps", second(NewLaplace(1e9, 1)), "outside the supported range"},
		{"gaussian delta 0", second(NewGaussian(1, 0, 1)), "delta must be in (0, 1), got 0"},
		{"gaussian delta 1", second(NewGaussian(1, 1, 1)), "got 1"},
		{"gaussian sens NaN", second(NewGaussian(1, 1e-5, nan)), "L2 sensitivity must be positive and finite, got NaN"},
		{"gaussian eps -0.5", second(NewGaussian(-0.5, 1e-5, 1)), "got -0.5"},
		{"gaussian tiny eps", second(NewGaussian(1e-7, 1e-7, 1)), "use Laplace"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, c.err, c.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestLaplaceParameters(t *testing.T) {
	l, err := NewLaplace(0.5, 3)
	if err != nil {
		t.Fatal(err)
	}
	b := 3 / 0.5
	// Larger than Δ/ε only by the rounding margin and the t/s representation.
	if l.Scale() < b || l.Scale() > b*(1+1e-6) {
		t.Errorf("Scale() = %v, want just above %v", l.Scale(), b)
	}
	if g := l.Granularity(); g < b/(1<<40) || g >= 2*b/(1<<40) {
		t.Errorf("Granularity() = %v, want the power of two in [b/2^40, 2b/2^40)", g)
	}
	if l.Epsilon() != 0.5 || l.Delta() != 0 || l.Rho() != 0.125 || l.Name() != "laplace" {
		t.Errorf("Epsilon, Delta, Rho, Name = %v, %v, %v, %q", l.Epsilon(), l.Delta(), l.Rho(), l.Name())
	}
	want := b*math.Log(1/(1-0.95)) + 2*l.Granularity()
	if h := l.ConfidenceHalfWidth(0.95); math.Abs(h-want) > 1e-6*want {
		t.Errorf("ConfidenceHalfWidth(0.95) = %v, want %v", h, want)
	}
	for _, c := range []float64{0, 1, -0.5, math.NaN()} {
		if h := l.ConfidenceHalfWidth(c); !math.IsNaN(h) {
			t.Errorf("ConfidenceHalfWidth(%v) = %v, want NaN", c, h)
		}
	}
}

func TestAnalyticGaussianSigma(t *testing.T) {
	for _, c := range []struct{ eps, delta float64 }{{1, 1e-5}, {0.1, 1e-6}, {5, 1e-9}, {0.01, 1e-3}} {
		sigma := analyticGaussianSigma(c.eps, c.delta, 1)
		if d := gaussianDelta(c.eps, sigma, 1); d > c.delta {
			t.Errorf("(%v, %v): δ(σ=%v) = %g exceeds the target", c.eps, c.delta, sigma, d)
		}
		if d := gaussianDelta(c.eps, sigma*(1-1e-9), 1); d <= c.delta {
			t.Errorf("(%v, %v): σ=%v is not the smallest: δ(σ·(1−1e-9)) = %g", c.eps, c.delta, sigma, d)
		}
		if c.eps <= 1 {
			// Dwork and Roth 2014, Theorem A.1: the classical σ for ε ≤ 1.
			if classical := math.Sqrt(2*math.Log(1.25/c.delta)) / c.eps; sigma >= classical {
				t.Errorf("(%v, %v): analytic σ %v not below the classical %v", c.eps, c.delta, sigma, classical)
			}
		}
	}
	// Balle and Wang 2018 report σ ≈ 3.73 for ε = 1, δ = 1e-5, Δ = 1.
	if s := analyticGaussianSigma(1, 1e-5, 1); math.Abs(s-3.73) > 0.01 {
		t.Errorf("σ(1, 1e-5) = %v, want about 3.73", s)
	}
	// σ is linear in the sensitivity.
	if a, b := analyticGaussianSigma(1, 1e-5, 1), analyticGaussianSigma(1, 1e-5, 100); math.Abs(b/a-100) > 1e-8 {
		t.Errorf("σ(Δ=100)/σ(Δ=1) = %v, want 100", b/a)
	}
}

func TestGaussianParameters(t *testing.T) {
	g, err := NewGaussian(1, 1e-5, 2)
	if err != nil {
		t.Fatal(err)
	}
	sigma0 := analyticGaussianSigma(1, 1e-5, 2)
	if g.Scale() < sigma0 || g.Scale() > sigma0*(1+1e-4) {
		t.Errorf("Scale() = %v, want just above the analytic %v", g.Scale(), sigma0)
	}
	if r := g.Scale() / g.Granularity(); r < 1<<23 || r > 1<<26 {
		t.Errorf("σ/γ = %v, want about 2^24–2^25", r)
	}
	if rho, want := g.Rho(), 4/(2*sigma0*sigma0); rho > want*(1+1e-4) || rho < want*(1-1e-4) {
		t.Errorf("Rho() = %v, want about Δ²/(2σ²) = %v", rho, want)
	}
	if g.Epsilon() != 1 || g.Delta() != 1e-5 || g.Name() != "gaussian" {
		t.Errorf("Epsilon, Delta, Name = %v, %v, %q", g.Epsilon(), g.Delta(), g.Name())
	}
	want := g.Scale()*1.959963984540054 + 2*g.Granularity()
	if h := g.ConfidenceHalfWidth(0.95); math.Abs(h-want) > 1e-9*want {
		t.Errorf("ConfidenceHalfWidth(0.95) = %v, want %v", h, want)
	}
}

// The confidence half-widths must cover at least the stated share of releases,
// and not be so loose that they cover much more.
func TestConfidenceHalfWidthCoverage(t *testing.T) {
	l, _ := NewLaplace(0.7, 10)
	g, _ := NewGaussian(0.7, 1e-6, 10)
	const n, c = 40_000, 0.9
	for _, m := range []Mechanism{l, g} {
		h := m.ConfidenceHalfWidth(c)
		inside := 0
		for range n {
			if math.Abs(m.AddNoise(123.4)-123.4) <= h {
				inside++
			}
		}
		lo, hi := clopperPearson(inside, n, testAlpha)
		if hi < c || lo > c+0.01 {
			t.Errorf("%s: %d/%d releases within ±%v, interval [%.4f, %.4f] for target %v", m.Name(), inside, n, h, lo, hi, c)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	l, _ := NewLaplace(1, 1)
	g, _ := NewGaussian(1, 1e-6, 1)
	p, _ := NewPartitionSelector(1, 1e-6, 1)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				l.AddNoise(1)
				g.AddNoise(1)
				l.AddNoiseInt(1)
				p.Keep(10)
			}
		})
	}
	wg.Wait()
}
