package mechanism

import (
	"fmt"
	"math"
)

// MaxRoundedCoordinates is how many released values of one mechanism a single
// privacy unit may change while the guarantee still holds exactly. Rounding a
// value to the grid moves it by at most γ/2, so two neighbouring inputs that
// differ by Δ in one coordinate can differ by up to Δ/γ + 1 grid steps after
// rounding. The mechanisms therefore calibrate noise to the L1 sensitivity
// Δ₁ + MaxRoundedCoordinates·γ (Laplace) or the L2 sensitivity
// Δ₂ + √MaxRoundedCoordinates·γ (Gaussian) instead of Δ₁ and Δ₂. Google's
// library adds the same one step per coordinate (addLaplaceFloat64 scales
// with l1Sensitivity + granularity); we cover up to this many coordinates so
// that a GROUP BY whose L0 bound is at most MaxRoundedCoordinates is safe with
// one Mechanism for all groups. The engine must not use one Mechanism for more
// changed values per unit than this.
const MaxRoundedCoordinates = 1024

// laplaceGranularityParam is 2^k of Google's Secure Noise Generation note and
// laplace_noise.go: the Laplace grid is the smallest power of two ≥ b/2^40,
// so the noise takes about 2^40 distinct values per unit of scale.
const laplaceGranularityParam = 1 << 40

// gaussianGridBits sets the Gaussian grid: the smallest power of two
// ≥ σ/2^25, so σ spans 2^24–2^25 grid steps. That is fine enough that the
// grid is invisible next to the noise (steps of 3·10⁻⁸ σ) yet small enough
// that the exact sampler's integers fit in 128 bits (see newDiscreteGaussian).
const gaussianGridBits = 25

// ceilPowerOfTwo returns the smallest power of two ≥ x, for positive, finite,
// normal x. The result is exact (a float64 with zero mantissa).
func ceilPowerOfTwo(x float64) float64 {
	frac, exp := math.Frexp(x) // x = frac·2^exp, frac ∈ [0.5, 1)
	if frac == 0.5 {
		return x
	}
	return math.Ldexp(1, exp)
}

// roundToGrid returns the multiple of the power of two g nearest to x. The
// division and multiplication by g are exact in binary floating point, so the
// result is a deterministic function of x and exactly on the grid. A float
// with |x| ≥ 2^53·g has a unit in the last place ≥ g and is on the grid
// already (dividing it could also overflow).
func roundToGrid(x, g float64) float64 {
	if math.Abs(x) >= g*(1<<53) {
		return x
	}
	return math.Round(x/g) * g
}

// addOnGrid returns round(x) + k·g. The exact result (n+k)·g is a multiple of
// g; when it needs more than 53 significant bits the float addition rounds it
// to a nearby float, which is a multiple of g too and a function of n+k alone,
// so the rounding is post-processing and cannot reveal x (Mironov 2012's
// attack needs the output to depend on x beyond n+k). Non-finite x yields NaN.
func addOnGrid(x, g float64, k int64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return math.NaN()
	}
	return roundToGrid(x, g) + float64(k)*g
}

// integerGrid returns log2 of the grid used for integer releases: the float
// grid if that is ≥ 1, else 1 (shift 0) since integers need no rounding.
func integerGrid(g float64) uint {
	if g <= 1 {
		return 0
	}
	_, exp := math.Frexp(g) // g = 0.5·2^exp
	return uint(exp - 1)
}

// addOnIntGrid returns round(x / 2^shift)·2^shift + k·2^shift in int64,
// saturating at the int64 range. Saturation depends only on the exact integer
// round(x/2^shift) + k, so it is post-processing as in addOnGrid.
func addOnIntGrid(x int64, shift uint, k int64) int64 {
	q := x >> shift // ⌊x / 2^shift⌋
	if shift > 0 && x-q<<shift >= 1<<(shift-1) {
		q++ // round half up
	}
	sum := q + k
	switch {
	case k > 0 && sum < q:
		return math.MaxInt64
	case k < 0 && sum > q:
		return math.MinInt64
	case sum > math.MaxInt64>>shift:
		return math.MaxInt64
	case sum < math.MinInt64>>shift:
		return math.MinInt64
	}
	return sum << shift
}

// Bounds on the scales the exact samplers accept, in grid units.
const (
	minLaplaceScale  = 0x1p-20
	maxLaplaceScale  = 0x1p50
	minGaussianSigma = 0x1p-4
	maxGaussianSigma = 0x1.6p25 // a little under 2^25.5, so σ² < 2^51
)

// newDiscreteLaplace returns the discrete Laplace with scale t/s ≥ scale. The
// scale is represented as t/s with s a power of two and t ≈ 2^40, so the
// represented scale exceeds the requested one by at most 2^-39 relative; the
// +1 in t absorbs the rounding of the float computation of scale.
func newDiscreteLaplace(scale float64) (discreteLaplace, error) {
	if !(scale >= minLaplaceScale && scale <= maxLaplaceScale) {
		return discreteLaplace{}, fmt.Errorf("mechanism: Laplace scale %g grid steps is outside the supported range [2^-20, 2^50]", scale)
	}
	_, exp := math.Frexp(scale) // scale ∈ [2^(exp−1), 2^exp)
	j := max(41-exp, 0)
	t := math.Ceil(math.Ldexp(scale, j)) + 1
	return discreteLaplace{t: uint64(t), s: 1 << j}, nil
}

// scale returns t/s, the scale actually sampled.
func (d discreteLaplace) scale() float64 { return float64(d.t) / float64(d.s) }

// newDiscreteGaussian returns the discrete Gaussian with σ² = n/d ≥ sigma².
// n is in [2^50, 2^51) and d = 2^k; with σ in [2^-4, 2^25.5) every product in
// discreteGaussian.sample fits: d·t ≤ 2^60, 2·n·d·t² < 2^112, and
// |Y|·d·t < 2^63 for |Y| ≤ yMax, where yMax ≥ 2^11·σ for σ ≥ 1 and ≥ 2^12·σ²
// for σ < 1, beyond which the discrete Gaussian has mass below e^(−2^15).
func newDiscreteGaussian(sigma float64) (discreteGaussian, error) {
	if !(sigma >= minGaussianSigma && sigma <= maxGaussianSigma) {
		return discreteGaussian{}, fmt.Errorf("mechanism: Gaussian sigma %g grid steps is outside the supported range [2^-4, 2^25.5)", sigma)
	}
	s2 := sigma * sigma
	_, exp := math.Frexp(s2) // s2 ∈ [2^(exp−1), 2^exp)
	k := 51 - exp            // s2·2^k ∈ [2^50, 2^51)
	if k < 0 || k > 62 {
		return discreteGaussian{}, fmt.Errorf("mechanism: Gaussian sigma %g grid steps cannot be represented exactly", sigma)
	}
	// +1 covers the rounding of sigma*sigma (at most a quarter of a unit).
	n := uint64(math.Ceil(math.Ldexp(s2, k))) + 1
	d := uint64(1) << k
	// t = ⌊σ⌋ + 1 with σ = √(n/d): start from the float root and correct it
	// with exact integer comparisons r²·d ≤ n < (r+1)²·d.
	r := uint64(math.Sqrt(float64(n) / float64(d)))
	for r > 0 && u128From(n).less(mul64x64(r*r, d)) {
		r--
	}
	for !u128From(n).less(mul64x64((r+1)*(r+1), d)) {
		r++
	}
	t := r + 1
	dt := d * t
	dt2, over1 := u128From(dt).mul64(t)
	den, over2 := dt2.mul64(n)
	den, over3 := den.mul64(2)
	if dt/t != d || over1 || over2 || over3 {
		return discreteGaussian{}, fmt.Errorf("mechanism: Gaussian sigma %g grid steps overflows the exact sampler", sigma)
	}
	return discreteGaussian{
		n: n, d: d, dt: dt, den: den,
		laplace: discreteLaplace{t: t, s: 1},
		yMax:    (1<<63 - 1) / dt,
	}, nil
}

// sigma returns √(n/d), the standard deviation parameter actually sampled.
func (g discreteGaussian) sigma() float64 { return math.Sqrt(float64(g.n) / float64(g.d)) }
