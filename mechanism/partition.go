package mechanism

import (
	"errors"
	"fmt"
	"math"
)

// PartitionSelector decides which GROUP BY keys that are not public may be
// released, by Laplace thresholding (Korolova, Kenthapadi, Mishra, Ntoulas
// 2009, "Releasing Search Queries and Clicks Privately", WWW; Wilson et al.
// 2020, "Differentially Private SQL with Bounded User Contribution", PoPETs):
// a key is kept when its count of distinct privacy units plus discrete Laplace
// noise reaches a threshold. It is (ε, δ)-DP for a privacy unit that
// contributes to at most maxPartitions keys. Safe for concurrent use.
type PartitionSelector struct {
	epsilon, delta float64
	maxPartitions  int
	noise          discreteLaplace
	threshold      int64
}

// NewPartitionSelector returns a selector for an (ε, δ) budget and an L0 bound
// of maxPartitions keys per privacy unit.
//
// Privacy. Adding or removing one unit changes the distinct-unit count of at
// most L0 keys, each by 1. Keys present in both neighbours get discrete
// Laplace noise of scale b ≥ L0/ε, so their noisy counts (and whether they
// pass the threshold, a post-processing) are ε-DP together. A key whose only
// unit is the one removed has count 1 on one side and does not exist on the
// other; it must appear with probability at most δ/L0, so that by the union
// bound all such keys together appear with probability at most δ.
//
// Threshold. For the discrete Laplace P[Y = y] = (1−p)/(1+p)·p^|y| with
// p = e^(−1/b), summing the geometric series gives, for integers k ≥ 1,
//
//	P[Y ≥ k] = p^k/(1+p).
//
// A key with one unit is kept iff 1 + Y ≥ τ, i.e. Y ≥ k with τ = 1 + k, so k
// is the smallest integer ≥ 1 with p^k/(1+p) ≤ δ/L0:
//
//	k = ⌈b·(ln(L0/δ) − ln(1+p))⌉.
//
// As p → 1 this tends to the continuous threshold 1 + b·ln(L0/(2δ)) of
// Google's Laplace Threshold and Wilson et al.; the discrete tail is a little
// heavier, so k is up to one step larger.
func NewPartitionSelector(epsilon, delta float64, maxPartitions int) (*PartitionSelector, error) {
	if err := checkEpsilon(epsilon); err != nil {
		return nil, err
	}
	if delta == 0 {
		return nil, errors.New("mechanism: partition selection needs delta > 0 to release GROUP BY keys that are not public, got delta 0; declare the key's values public or grant a delta")
	}
	if err := checkDelta(delta); err != nil {
		return nil, err
	}
	if maxPartitions < 1 {
		return nil, fmt.Errorf("mechanism: maxPartitions (groups per privacy unit) must be at least 1, got %d", maxPartitions)
	}
	l0 := float64(maxPartitions)
	noise, err := newDiscreteLaplace(l0 / epsilon)
	if err != nil {
		return nil, fmt.Errorf("mechanism: partition selection noise for epsilon %v and %d groups per unit: %w", epsilon, maxPartitions, err)
	}
	b := noise.scale()
	logP := -1 / b
	logTail := math.Log(delta / l0) // ln(δ/L0), the bound on ln P[Y ≥ k]
	k := math.Max(1, math.Ceil(b*(math.Log(l0/delta)-math.Log1p(math.Exp(logP)))))
	// Guard against the float rounding of the ceiling above: step up until
	// ln(p^k/(1+p)) is below ln(δ/L0) with a relative margin.
	for k*logP-math.Log1p(math.Exp(logP)) > logTail-1e-12*math.Abs(logTail) {
		k++
	}
	if k > 1<<52 {
		return nil, fmt.Errorf("mechanism: partition selection threshold for epsilon %v, delta %v and %d groups per unit is too large (%v)", epsilon, delta, maxPartitions, k)
	}
	return &PartitionSelector{
		epsilon: epsilon, delta: delta, maxPartitions: maxPartitions,
		noise: noise, threshold: 1 + int64(k),
	}, nil
}

// Keep reports whether a key with distinctUnits contributing privacy units
// may be released: distinctUnits + Y ≥ Threshold() for fresh discrete Laplace
// noise Y. Counts below 1 are never kept.
func (p *PartitionSelector) Keep(distinctUnits int64) bool {
	if distinctUnits < 1 {
		return false
	}
	y := withSource(p.noise.sample)
	return y >= p.threshold-distinctUnits
}

// Threshold returns τ: a key is kept when its noisy distinct-unit count is ≥ τ.
func (p *PartitionSelector) Threshold() float64 { return float64(p.threshold) }

// Scale returns the scale b ≥ maxPartitions/ε of the noise on the counts.
func (p *PartitionSelector) Scale() float64 { return p.noise.scale() }

// Epsilon returns ε.
func (p *PartitionSelector) Epsilon() float64 { return p.epsilon }

// Delta returns δ.
func (p *PartitionSelector) Delta() float64 { return p.delta }
