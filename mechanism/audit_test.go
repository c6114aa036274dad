package mechanism

import (
	"math"
	"testing"
)

// An empirical privacy audit: release the same aggregate on two neighbouring
// databases many times, histogram the outputs, and bound the privacy loss
// max_bins |ln(P[D ∈ bin] / P[D′ ∈ bin])| from below with Clopper–Pearson
// intervals (Bonferroni-corrected over the bins). A correct ε-DP mechanism
// gives a lower bound ≤ ε except with probability testAlpha; each audit is
// paired with a deliberately broken mechanism that the audit must catch.

const (
	auditReleases = 100_000
	auditMinCount = 100 // bins with less mass are ignored (mass ≥ 0.1% ≫ δ)
)

type neighbours struct {
	name  string
	d, d2 func() float64 // one release on D and on D′
	bin   func(float64) int64
}

// auditLowerBound returns a (1 − testAlpha)-confidence lower bound on the
// largest privacy loss over the histogram bins with enough samples, and the
// point estimate of that loss.
func auditLowerBound(t *testing.T, nb neighbours) (lower, point float64) {
	t.Helper()
	counts, counts2 := map[int64]int{}, map[int64]int{}
	for range auditReleases {
		counts[nb.bin(nb.d())]++
		counts2[nb.bin(nb.d2())]++
	}
	var bins []int64
	for b, c := range counts {
		if c >= auditMinCount && counts2[b] >= auditMinCount {
			bins = append(bins, b)
		}
	}
	if len(bins) < 3 {
		t.Fatalf("%s: only %d bins have %d samples on both sides", nb.name, len(bins), auditMinCount)
	}
	alpha := testAlpha / float64(2*len(bins)) // two one-sided bounds per bin
	lower, point = math.Inf(-1), 0
	for _, b := range bins {
		c, c2 := counts[b], counts2[b]
		lo, hi := clopperPearson(c, auditReleases, 2*alpha)
		lo2, hi2 := clopperPearson(c2, auditReleases, 2*alpha)
		lower = max(lower, math.Log(lo/hi2), math.Log(lo2/hi))
		point = max(point, math.Abs(math.Log(float64(c)/float64(c2))))
	}
	return lower, point
}

func countNeighbours(m Mechanism) neighbours {
	return neighbours{
		name: m.Name() + " COUNT 100 vs 101",
		d:    func() float64 { return float64(m.AddNoiseInt(100)) },
		d2:   func() float64 { return float64(m.AddNoiseInt(101)) },
		bin:  func(v float64) int64 { return int64(v) },
	}
}

// sumNeighbours: values clamped to [0, 100], so removing a unit changes the
// SUM by up to 100.
func sumNeighbours(m Mechanism, width float64) neighbours {
	return neighbours{
		name: m.Name() + " SUM 5000 vs 5100",
		d:    func() float64 { return m.AddNoise(5000) },
		d2:   func() float64 { return m.AddNoise(5100) },
		bin:  func(v float64) int64 { return int64(math.Floor(v / width)) },
	}
}

func TestAuditLaplace(t *testing.T) {
	const eps = 1.0
	for _, c := range []struct {
		sensitivity float64
		release     func(Mechanism) neighbours
	}{
		{1, countNeighbours},
		{100, func(m Mechanism) neighbours { return sumNeighbours(m, 25) }},
	} {
		good, err := NewLaplace(eps, c.sensitivity)
		if err != nil {
			t.Fatal(err)
		}
		nb := c.release(good)
		if lower, point := auditLowerBound(t, nb); lower > eps {
			t.Errorf("%s at ε=%v: measured privacy loss ≥ %.3f (estimate %.3f) exceeds ε", nb.name, eps, lower, point)
		} else {
			t.Logf("%s at ε=%v: loss estimate %.3f, lower bound %.3f", nb.name, eps, point, lower)
		}
		// Noise of scale b/3 claims ε but spends 3ε: the audit must see it.
		broken, err := NewLaplace(3*eps, c.sensitivity)
		if err != nil {
			t.Fatal(err)
		}
		nb = c.release(broken)
		if lower, point := auditLowerBound(t, nb); lower <= eps {
			t.Errorf("%s with scale b/3: measured loss lower bound %.3f (estimate %.3f) does not exceed ε=%v", nb.name, lower, point, eps)
		}
	}
}

func TestAuditGaussian(t *testing.T) {
	const eps, delta = 1.0, 1e-5
	for _, c := range []struct {
		sensitivity float64
		release     func(Mechanism) neighbours
	}{
		{1, countNeighbours},
		{100, func(m Mechanism) neighbours { return sumNeighbours(m, 25) }},
	} {
		good, err := NewGaussian(eps, delta, c.sensitivity)
		if err != nil {
			t.Fatal(err)
		}
		// Every bin audited has probability ≈ 0.1% or more ≫ δ, where the privacy
		// loss of an (ε, δ) Gaussian is below ε.
		nb := c.release(good)
		if lower, point := auditLowerBound(t, nb); lower > eps {
			t.Errorf("%s at (ε, δ) = (%v, %v): measured loss ≥ %.3f (estimate %.3f) exceeds ε", nb.name, eps, delta, lower, point)
		} else {
			t.Logf("%s at (ε, δ)=(%v, %v): loss estimate %.3f, lower bound %.3f", nb.name, eps, delta, point, lower)
		}
		// σ/3 (calibrated for a third of the sensitivity) must be caught.
		broken, err := NewGaussian(eps, delta, c.sensitivity/3)
		if err != nil {
			t.Fatal(err)
		}
		nb = c.release(broken)
		if lower, point := auditLowerBound(t, nb); lower <= eps {
			t.Errorf("%s with σ/3: measured loss lower bound %.3f (estimate %.3f) does not exceed ε=%v", nb.name, lower, point, eps)
		}
	}
}
