package mechanism

import (
	"fmt"
	"math"
	"testing"
)

func TestIntervalHelpers(t *testing.T) {
	in := Interval{-1, 4}
	if !in.Contains(-1) || !in.Contains(4) || in.Contains(4.1) {
		t.Errorf("Contains on %v is wrong", in)
	}
	if got := in.Shift(2); got != (Interval{1, 6}) {
		t.Errorf("Shift(2) = %v", got)
	}
	if got := in.Clamp(0, 3); got != (Interval{0, 3}) {
		t.Errorf("Clamp(0, 3) = %v", got)
	}
	if got := (Interval{-2, 9}).Sqrt(); got != (Interval{0, 3}) {
		t.Errorf("Sqrt = %v", got)
	}
	if got := SplitConfidence(0.95, 2); math.Abs(got-0.975) > 1e-15 {
		t.Errorf("SplitConfidence(0.95, 2) = %v", got)
	}
	for _, c := range []struct {
		conf  float64
		parts int
	}{{1, 2}, {0, 2}, {0.9, 0}} {
		if !math.IsNaN(SplitConfidence(c.conf, c.parts)) {
			t.Errorf("SplitConfidence(%v, %d) is not NaN", c.conf, c.parts)
		}
	}
	if got := RatioInterval(10, 2, 4, 1); got != (Interval{8.0 / 5, 12.0 / 3}) {
		t.Errorf("RatioInterval(10±2, 4±1) = %v, want [1.6, 4]", got)
	}
	// The count interval is clipped below at 1: a negative sum divides by 1.
	if got := RatioInterval(-3, 1, 0.5, 2); got != (Interval{-4, -2.0 / 2.5}) {
		t.Errorf("RatioInterval(-3±1, 0.5±2) = %v, want [-4, -0.8]", got)
	}
	if got := RatioInterval(1, -1, 1, 1); !math.IsNaN(got.Low) {
		t.Errorf("negative half-width gave %v", got)
	}
	if got := VarianceInterval(1, 0, 0, 0, 1, 0, -1); !math.IsNaN(got.Low) {
		t.Errorf("negative maxVar gave %v", got)
	}
}

// checkCoverage counts how often an interval built from noisy releases
// contains the truth, and fails if it is significantly below the nominal
// level. With power, the same check with half the half-widths must fail, so
// that the test can fail (where the interval is conservative by design, as
// near the clamps of a variance, halving may still cover).
func checkCoverage(t *testing.T, name string, confidence float64, trials int, power bool, trial func(shrink float64) bool) {
	t.Helper()
	shrinks := []float64{1}
	if power {
		shrinks = append(shrinks, 0.5)
	}
	for _, shrink := range shrinks {
		hits := 0
		for range trials {
			if trial(shrink) {
				hits++
			}
		}
		lo, hi := clopperPearson(hits, trials, testAlpha)
		switch {
		case shrink == 1 && hi < confidence:
			t.Errorf("%s: covered %d/%d, significantly below %v", name, hits, trials, confidence)
		case shrink != 1 && lo >= confidence:
			t.Errorf("%s with half-widths ×%v: still covered %d/%d ≥ %v; the check has no power", name, shrink, hits, trials, confidence)
		}
		t.Logf("%s, half-widths ×%v: coverage %.4f", name, shrink, float64(hits)/float64(trials))
	}
}

// AVG = mid + S/N with S on values clamped to [lower, upper] shifted by mid,
// each released with its own Laplace noise, as the engine does.
func TestRatioIntervalCoverage(t *testing.T) {
	const trials, confidence = 20_000, 0.9
	for _, c := range []struct {
		eps          float64
		n            int64
		lower, upper float64
		mean         float64
	}{
		{1, 20, 0, 100, 70},
		{0.1, 500, 18, 90, 38},
		{1, 3, -10, 10, 9},
	} {
		mid, half := (c.lower+c.upper)/2, (c.upper-c.lower)/2
		sumNoise, err := NewLaplace(c.eps/2, half)
		if err != nil {
			t.Fatal(err)
		}
		countNoise, err := NewLaplace(c.eps/2, 1)
		if err != nil {
			t.Fatal(err)
		}
		sum := float64(c.n) * (c.mean - mid)
		each := SplitConfidence(confidence, 2)
		checkCoverage(t, fmt.Sprintf("AVG of %d values with mean %v at ε=%v", c.n, c.mean, c.eps), confidence, trials, true, func(shrink float64) bool {
			s := sumNoise.AddNoise(sum)
			n := float64(countNoise.AddNoiseInt(c.n))
			in := RatioInterval(s, shrink*sumNoise.ConfidenceHalfWidth(each), n, shrink*IntegerHalfWidth(countNoise, each))
			return in.Shift(mid).Clamp(c.lower, c.upper).Contains(c.mean)
		})
	}
}

// VAR from three noisy moments around the midpoint; the data are n values
// split between two points, so the true moments are known exactly.
func TestVarianceIntervalCoverage(t *testing.T) {
	const trials, confidence = 20_000, 0.9
	for _, c := range []struct {
		eps          float64
		n, nHigh     int64 // n values, nHigh of them at hi and the rest at lo
		lower, upper float64
		lo, hi       float64
		power        bool
	}{
		{1, 40, 10, 0, 10, 2, 9, false},        // few values: the clamps dominate
		{0.5, 1000, 500, 0, 1, 0, 1, true},     // the largest variance, at maxVar
		{2, 200, 199, -5, 5, 4, 4.5, false},    // a variance near 0
		{1, 5000, 1000, 0, 100, 20, 60, false}, // interior: the errors of A and B² add up
	} {
		mid, half := (c.lower+c.upper)/2, (c.upper-c.lower)/2
		maxVar := half * half
		third := c.eps / 3
		countNoise, err1 := NewLaplace(third, 1)
		s1Noise, err2 := NewLaplace(third, half)
		s2Noise, err3 := NewLaplace(third, half*half)
		if err := firstError(err1, err2, err3); err != nil {
			t.Fatal(err)
		}
		nLow := c.n - c.nHigh
		s1 := float64(nLow)*(c.lo-mid) + float64(c.nHigh)*(c.hi-mid)
		s2 := float64(nLow)*(c.lo-mid)*(c.lo-mid) + float64(c.nHigh)*(c.hi-mid)*(c.hi-mid)
		mean := s1 / float64(c.n)
		variance := s2/float64(c.n) - mean*mean
		each := SplitConfidence(confidence, 3)
		name := fmt.Sprintf("VAR of %d values (true %.4g) at ε=%v", c.n, variance, c.eps)
		checkCoverage(t, name, confidence, trials, c.power, func(shrink float64) bool {
			in := VarianceInterval(
				float64(countNoise.AddNoiseInt(c.n)), shrink*IntegerHalfWidth(countNoise, each),
				s1Noise.AddNoise(s1), shrink*s1Noise.ConfidenceHalfWidth(each),
				s2Noise.AddNoise(s2), shrink*s2Noise.ConfidenceHalfWidth(each),
				maxVar)
			if in.Low < 0 || in.High > maxVar || in.Low > in.High {
				t.Fatalf("%s: interval %v outside [0, %v]", name, in, maxVar)
			}
			// STDDEV: the square roots cover the true standard deviation.
			return in.Contains(variance) && in.Sqrt().Contains(math.Sqrt(variance))
		})
	}
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// IntegerHalfWidth covers AddNoiseInt; ConfidenceHalfWidth does not at unit
// scale (P[|K| ≥ 3] = 2e⁻³/(1 + e⁻¹) = 7.3% for the discrete Laplace with
// b = 1, against 5% nominal).
func TestIntegerHalfWidthCoverage(t *testing.T) {
	const trials, confidence = 40_000, 0.95
	lap1, _ := NewLaplace(1, 1)
	lap3, _ := NewLaplace(0.3, 1)
	gauss, _ := NewGaussian(1, 1e-6, 1)
	for _, m := range []Mechanism{lap1, lap3, gauss} {
		h := IntegerHalfWidth(m, confidence)
		inside := 0
		for range trials {
			if math.Abs(float64(m.AddNoiseInt(1000)-1000)) <= h {
				inside++
			}
		}
		if _, hi := clopperPearson(inside, trials, testAlpha); hi < confidence {
			t.Errorf("%s (scale %v): %d/%d integer releases within ±%v < %v", m.Name(), m.Scale(), inside, trials, h, confidence)
		}
	}
	h := lap1.ConfidenceHalfWidth(confidence)
	inside := 0
	for range trials {
		if math.Abs(float64(lap1.AddNoiseInt(1000)-1000)) <= h {
			inside++
		}
	}
	if lo, _ := clopperPearson(inside, trials, testAlpha); lo >= confidence {
		t.Errorf("ConfidenceHalfWidth covered %d/%d integer releases: expected it to fall short of %v at b = 1", inside, trials, confidence)
	}
	if !math.IsNaN(IntegerHalfWidth(lap1, 1)) || !math.IsNaN(IntegerHalfWidth(nil, 0.9)) {
		t.Error("IntegerHalfWidth accepted confidence 1 or a nil Mechanism")
	}
}
