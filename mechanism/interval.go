package mechanism

import (
	"math"
)

// Interval is the closed interval [Low, High]. The confidence intervals here
// are sound: they hold with at least the stated probability for every
// database, by tail bounds and a union bound, never by simulation. Each is a
// function of released values and public parameters only, so reporting it is
// post-processing and costs no budget.
type Interval struct{ Low, High float64 }

// Contains reports whether x ∈ [Low, High].
func (i Interval) Contains(x float64) bool { return i.Low <= x && x <= i.High }

// Shift returns [Low + c, High + c].
func (i Interval) Shift(c float64) Interval { return Interval{i.Low + c, i.High + c} }

// Clamp returns the interval with both ends clamped to [lo, hi]. When the
// true value is known to lie in [lo, hi] (a mean of values clamped there, a
// variance between 0 and its maximum) this keeps the coverage.
func (i Interval) Clamp(lo, hi float64) Interval {
	return Interval{min(max(i.Low, lo), hi), min(max(i.High, lo), hi)}
}

// Sqrt returns [√Low, √High] for an interval within [0, ∞): the interval of
// a standard deviation from that of a variance (√ is increasing).
func (i Interval) Sqrt() Interval {
	return Interval{math.Sqrt(max(i.Low, 0)), math.Sqrt(max(i.High, 0))}
}

// SplitConfidence returns the confidence each of parts intervals needs so
// that all hold together with probability at least confidence: by the union
// bound (Bonferroni), 1 − (1 − confidence)/parts. NaN for parts < 1 or
// confidence outside (0, 1).
func SplitConfidence(confidence float64, parts int) float64 {
	if parts < 1 || !(confidence > 0 && confidence < 1) {
		return math.NaN()
	}
	return 1 - (1-confidence)/float64(parts)
}

// IntegerHalfWidth returns h with |m.AddNoiseInt(x) − x| ≤ h with probability
// at least confidence. ConfidenceHalfWidth is for AddNoise and is too short
// for AddNoiseInt at small scales: at ε = 1 and Δ = 1 the integer noise
// exceeds the float half-width for 95% in 7.3% of releases.
//
//   - Laplace: the integer noise K (in steps of the integer grid) is discrete
//     Laplace with ratio q = e^(−1/τ), P[|K| ≥ j+1] = 2q^(j+1)/(1+q) ≤ q^j,
//     which is ≤ α = 1 − confidence for j = ⌈τ·ln(1/α)⌉.
//   - Gaussian: P[K ≥ k] is at most the continuous tail from k − 1 (see
//     Gaussian.ConfidenceHalfWidth), so |K| ≤ σ·Φ⁻¹(1 − α/2) + 1.
//
// Half a step is added for the rounding of x to the integer grid (a grid
// of 1 for all but enormous scales, where x needs no rounding). NaN for
// confidence outside (0, 1) or another Mechanism.
func IntegerHalfWidth(m Mechanism, confidence float64) float64 {
	if !(confidence > 0 && confidence < 1) {
		return math.NaN()
	}
	switch m := m.(type) {
	case *Laplace:
		steps := math.Ceil(-m.intNoise.scale() * math.Log1p(-confidence))
		return math.Ldexp(steps+0.5, int(m.intShift))
	case *Gaussian:
		steps := m.intNoise.sigma()*math.Sqrt2*math.Erfinv(confidence) + 1
		return math.Ldexp(steps+0.5, int(m.intShift))
	}
	return math.NaN()
}

// RatioInterval returns an interval for S/N, N ≥ 1, from released values
// num = S + noise and den = N + noise whose errors are at most numHalf and
// denHalf (each with its own confidence, for example both at
// SplitConfidence(c, 2) for a joint c). On that event S ∈ [num ± numHalf] and
// N ∈ [max(1, den − denHalf), max(1, den + denHalf)] (the true count of a
// non-empty group is at least 1), and S/N is monotone in each argument on
// that box, so its extremes are at the corners (interval arithmetic, Moore
// 1966, "Interval Analysis").
//
// For AVG released as mid + S/N with S the sum of (x − mid) over values
// clamped to [lower, upper], the interval is
// RatioInterval(…).Shift(mid).Clamp(lower, upper). NaN ends for NaN inputs
// or negative half-widths.
func RatioInterval(num, numHalf, den, denHalf float64) Interval {
	if !(numHalf >= 0 && denHalf >= 0) || math.IsNaN(num) || math.IsNaN(den) {
		return Interval{math.NaN(), math.NaN()}
	}
	sLo, sHi := num-numHalf, num+numHalf
	nLo, nHi := max(1, den-denHalf), max(1, den+denHalf)
	return Interval{
		Low:  min(sLo/nLo, sLo/nHi),
		High: max(sHi/nLo, sHi/nHi),
	}
}

// VarianceInterval returns an interval for the population variance
//
//	VAR = S₂/N − (S₁/N)²,  S₁ = Σ(x − mid), S₂ = Σ(x − mid)²,
//
// of values clamped to [lower, upper], mid their midpoint and
// maxVar = ((upper − lower)/2)², from released n, s1, s2 with errors at most
// nHalf, s1Half, s2Half (for a joint confidence c give each
// SplitConfidence(c, 3)). On that event, by interval arithmetic (Moore 1966):
//
//	A = S₂/N ∈ RatioInterval(s2, s2Half, n, nHalf) ∩ [0, maxVar],
//	B = S₁/N ∈ RatioInterval(s1, s1Half, n, nHalf) ∩ [−R, R],  R = √maxVar,
//	VAR ∈ [A_lo − max B², A_hi − min B²] ∩ [0, maxVar].
//
// Clipping A at R² already gives the Bhatia–Davis bound
// VAR ≤ (upper − μ)(μ − lower) = R² − B² (Bhatia and Davis 2000, "A Better
// Bound on the Variance", Amer. Math. Monthly 107(4)). For STDDEV take
// .Sqrt(). NaN ends for NaN inputs, negative half-widths or maxVar.
func VarianceInterval(n, nHalf, s1, s1Half, s2, s2Half float64, maxVar float64) Interval {
	if !(maxVar >= 0) || math.IsInf(maxVar, 1) {
		return Interval{math.NaN(), math.NaN()}
	}
	r := math.Sqrt(maxVar)
	a := RatioInterval(s2, s2Half, n, nHalf).Clamp(0, maxVar)
	b := RatioInterval(s1, s1Half, n, nHalf).Clamp(-r, r)
	if math.IsNaN(a.Low) || math.IsNaN(b.Low) {
		return Interval{math.NaN(), math.NaN()}
	}
	sqLo, sqHi := b.Low*b.Low, b.High*b.High
	if sqLo > sqHi {
		sqLo, sqHi = sqHi, sqLo
	}
	if b.Low <= 0 && b.High >= 0 {
		sqLo = 0
	}
	return Interval{a.Low - sqHi, a.High - sqLo}.Clamp(0, maxVar)
}
