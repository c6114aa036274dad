package mechanism

import (
	"math"
	"strings"
	"testing"
)

func TestPartitionThresholdFormula(t *testing.T) {
	for _, c := range []struct {
		eps, delta float64
		l0         int
	}{{1, 1e-5, 1}, {1, 1e-5, 4}, {0.1, 1e-9, 10}, {3, 0.2, 1}, {0.5, 1e-3, 100}} {
		p, err := NewPartitionSelector(c.eps, c.delta, c.l0)
		if err != nil {
			t.Fatal(err)
		}
		b := float64(c.l0) / c.eps
		continuous := 1 + b*math.Log(float64(c.l0)/(2*c.delta))
		if got := p.Threshold(); got < continuous || got > continuous+2 {
			t.Errorf("Threshold(%v, %v, %d) = %v, want within 2 above the continuous %v", c.eps, c.delta, c.l0, got, continuous)
		}
		// The defining property: P[Y ≥ τ−1] = p^k/(1+p) ≤ δ/L0, and one step lower is not enough.
		ratio := math.Exp(-1 / p.Scale())
		tail := func(k float64) float64 { return math.Pow(ratio, k) / (1 + ratio) }
		k := p.Threshold() - 1
		if tail(k) > c.delta/float64(c.l0) || (k > 1 && tail(k-1) <= c.delta/float64(c.l0)) {
			t.Errorf("Threshold(%v, %v, %d) = %v: tail %g at k, %g at k−1, bound %g", c.eps, c.delta, c.l0, p.Threshold(), tail(k), tail(k-1), c.delta/float64(c.l0))
		}
	}
}

// keepFrequency returns how often a key with units distinct units is kept.
func keepFrequency(p *PartitionSelector, units int64, n int) int {
	kept := 0
	for range n {
		if p.Keep(units) {
			kept++
		}
	}
	return kept
}

func TestPartitionSingleUnitRarelyKept(t *testing.T) {
	const eps, delta, l0, n = 1.0, 0.01, 2, 200_000
	p, err := NewPartitionSelector(eps, delta, l0)
	if err != nil {
		t.Fatal(err)
	}
	ratio := math.Exp(-1 / p.Scale())
	exact := math.Pow(ratio, p.Threshold()-1) / (1 + ratio)
	kept := keepFrequency(p, 1, n)
	lo, hi := clopperPearson(kept, n, testAlpha)
	if lo > delta/l0 {
		t.Errorf("a one-unit key was kept %d/%d times: frequency ≥ %.5f > δ/L0 = %.5f", kept, n, lo, delta/l0)
	}
	if exact < lo || exact > hi {
		t.Errorf("a one-unit key was kept %d/%d times, interval [%.5f, %.5f] misses the exact %.5f", kept, n, lo, hi, exact)
	}
	// The test must catch a threshold one step too low.
	broken := *p
	broken.threshold--
	kept = keepFrequency(&broken, 1, n)
	if lo, _ := clopperPearson(kept, n, testAlpha); lo <= delta/l0 {
		t.Errorf("threshold one below %v kept a one-unit key %d/%d times: not detected as above δ/L0", p.Threshold(), kept, n)
	}
}

func TestPartitionManyUnitsKept(t *testing.T) {
	p, err := NewPartitionSelector(1, 1e-6, 3)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20_000
	units := int64(p.Threshold()) + 50
	if kept := keepFrequency(p, units, n); kept < n*999/1000 {
		t.Errorf("a key with %d units (threshold %v) was kept only %d/%d times", units, p.Threshold(), kept, n)
	}
	if p.Keep(0) || p.Keep(-3) {
		t.Error("a key without units was kept")
	}
}

func TestPartitionSelectorRejectsBadArguments(t *testing.T) {
	_, err := NewPartitionSelector(1, 0, 1)
	if err == nil || !strings.Contains(err.Error(), "delta > 0") {
		t.Errorf("delta 0: error %v, want one explaining that delta must be > 0", err)
	}
	for _, c := range []struct {
		eps, delta float64
		l0         int
		want       string
	}{
		{-1, 1e-5, 1, "epsilon must be positive and finite, got -1"},
		{1, 1, 1, "delta must be in (0, 1), got 1"},
		{1, 1e-5, 0, "at least 1, got 0"},
	} {
		if _, err := NewPartitionSelector(c.eps, c.delta, c.l0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewPartitionSelector(%v, %v, %d) error %v, want %q", c.eps, c.delta, c.l0, err, c.want)
		}
	}
}
