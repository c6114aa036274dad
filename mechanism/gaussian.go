package mechanism

import (
	"fmt"
	"math"
)

// maxGaussianNoiseRatio bounds σ/Δ₂. The grid is σ/2^25 at the finest (the
// exact sampler's integers must fit in 128 bits), and the rounding margin
// √MaxRoundedCoordinates·γ is then (σ/Δ₂)·2^-20 relative to Δ₂: at the bound
// the noise grows by 6%. Beyond it (ε below about 10⁻⁴) Laplace is the better
// mechanism anyway.
const maxGaussianNoiseRatio = 1 << 16

// gaussianSearchSteps bounds the bisection of analyticGaussianSigma; each step
// halves the bracket, and 200 steps exhaust float64 precision.
const gaussianSearchSteps = 200

// Gaussian is the analytic Gaussian mechanism (Balle and Wang 2018) with
// discrete Gaussian noise (Canonne, Kamath, Steinke 2020) on a power-of-two
// grid: (ε, δ)-differentially private for a release of L2 sensitivity Δ₂.
type Gaussian struct {
	epsilon, delta float64
	sensitivity    float64          // Δ₂ as given
	effective      float64          // Δ₂ + √MaxRoundedCoordinates·γ
	granularity    float64          // γ
	noise          discreteGaussian // in units of γ
	intShift       uint
	intNoise       discreteGaussian // in units of 2^intShift
}

// NewGaussian returns a Gaussian mechanism for one (ε, δ)-DP release of a
// value (or a vector of at most MaxRoundedCoordinates values) with L2
// sensitivity l2Sensitivity.
//
// σ is the smallest (to relative 1e-12, rounded up) with δ(ε, σ) ≤ δ for the
// exact privacy profile of the Gaussian mechanism (Balle and Wang 2018,
// "Improving the Gaussian Mechanism for Differential Privacy: Analytical
// Calibration and Optimal Denoising", ICML, Theorem 8), computed for the
// sensitivity Δ₂ + √MaxRoundedCoordinates·γ that remains after rounding to
// the grid γ. The discrete Gaussian N_Z(0, σ²/γ²) has the same zCDP guarantee
// as the continuous one for integer shifts (Canonne et al. 2020, their
// concentrated-DP theorem for the discrete Gaussian), and its
// (ε, δ) curve differs from the continuous one only by its discretisation at
// one grid step, which is 2^-24 of σ here; the sensitivity margin of
// 32 grid steps absorbs that.
func NewGaussian(epsilon, delta, l2Sensitivity float64) (*Gaussian, error) {
	if err := checkEpsilon(epsilon); err != nil {
		return nil, err
	}
	if err := checkDelta(delta); err != nil {
		return nil, err
	}
	if err := checkSensitivity("L2", l2Sensitivity); err != nil {
		return nil, err
	}
	if !(l2Sensitivity >= 0x1p-800 && l2Sensitivity <= 0x1p800) {
		return nil, fmt.Errorf("mechanism: L2 sensitivity %v is outside the supported range [2^-800, 2^800]", l2Sensitivity)
	}
	sigma0 := analyticGaussianSigma(epsilon, delta, l2Sensitivity)
	if ratio := sigma0 / l2Sensitivity; ratio > maxGaussianNoiseRatio {
		return nil, fmt.Errorf("mechanism: Gaussian noise for epsilon %v and delta %v needs sigma %v times the sensitivity, more than the supported 2^16; use Laplace noise for so small an epsilon", epsilon, delta, ratio)
	}
	g := ceilPowerOfTwo(sigma0 / (1 << gaussianGridBits))
	effective := l2Sensitivity + math.Sqrt(MaxRoundedCoordinates)*g
	sigma := analyticGaussianSigma(epsilon, delta, effective)
	noise, err := newDiscreteGaussian(sigma / g)
	if err != nil {
		return nil, fmt.Errorf("mechanism: Gaussian noise for epsilon %v, delta %v and L2 sensitivity %v: %w", epsilon, delta, l2Sensitivity, err)
	}
	m := &Gaussian{
		epsilon: epsilon, delta: delta, sensitivity: l2Sensitivity,
		effective: effective, granularity: g, noise: noise,
	}
	m.intShift = integerGrid(g)
	if g >= 1 {
		m.intNoise = noise
	} else {
		// Integers need no rounding on the unit grid, so σ (in units of 1)
		// calibrated for Δ₂ plus the margin is more than enough. The floor
		// of 1/16 only matters for enormous ε and only adds noise.
		if m.intNoise, err = newDiscreteGaussian(max(m.Scale(), minGaussianSigma)); err != nil {
			return nil, fmt.Errorf("mechanism: integer Gaussian noise for epsilon %v, delta %v and L2 sensitivity %v: %w", epsilon, delta, l2Sensitivity, err)
		}
	}
	return m, nil
}

// gaussianDelta is the exact δ of the Gaussian mechanism with noise σ for L2
// sensitivity Δ at a given ε (Balle and Wang 2018, Theorem 8):
//
//	δ(ε, σ) = Φ(Δ/(2σ) − εσ/Δ) − e^ε·Φ(−Δ/(2σ) − εσ/Δ).
//
// The second term is evaluated as exp(ε + ln Φ(·)) so that a large ε does not
// overflow e^ε while Φ underflows.
func gaussianDelta(epsilon, sigma, sensitivity float64) float64 {
	a := sensitivity / (2 * sigma)
	b := epsilon * sigma / sensitivity
	return normalCDF(a-b) - math.Exp(epsilon+math.Log(normalCDF(-a-b)))
}

// normalCDF is Φ, via erfc so that the lower tail keeps full relative precision.
func normalCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// analyticGaussianSigma returns the smallest σ, up to relative 1e-12 and
// rounded up, with gaussianDelta(ε, σ, Δ) ≤ δ. δ(ε, σ) decreases in σ, so
// doubling finds a bracket and bisection narrows it, as in Balle and Wang
// 2018, Algorithm 1 (and Google's sigmaForGaussian); the upper end of the
// bracket always satisfies the target.
func analyticGaussianSigma(epsilon, delta, sensitivity float64) float64 {
	lo, hi := 0.0, sensitivity
	for gaussianDelta(epsilon, hi, sensitivity) > delta {
		lo, hi = hi, 2*hi
	}
	for range gaussianSearchSteps {
		if hi-lo <= 1e-12*hi {
			break
		}
		mid := lo + (hi-lo)/2
		if gaussianDelta(epsilon, mid, sensitivity) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// AddNoise returns x rounded to the grid plus discrete Gaussian noise.
func (m *Gaussian) AddNoise(x float64) float64 {
	k := withSource(m.noise.sample)
	return addOnGrid(x, m.granularity, k)
}

// AddNoiseInt returns x plus discrete Gaussian noise on the integer grid.
func (m *Gaussian) AddNoiseInt(x int64) int64 {
	k := withSource(m.intNoise.sample)
	return addOnIntGrid(x, m.intShift, k)
}

// Scale returns the σ actually used (σ² exactly n/d grid steps squared).
func (m *Gaussian) Scale() float64 { return m.noise.sigma() * m.granularity }

// Granularity returns the grid step γ of AddNoise.
func (m *Gaussian) Granularity() float64 { return m.granularity }

// ConfidenceHalfWidth returns σ·Φ⁻¹((1+c)/2) + 2γ. The discrete Gaussian's
// normaliser Σ_k exp(−k²/2s²) is at least √(2π)·s (Poisson summation, as
// used by Canonne et al. 2020 to compare the two), so its tail P[K ≥ k] is at most the continuous
// tail from k − 1: one γ covers the discreteness, one the rounding of x.
func (m *Gaussian) ConfidenceHalfWidth(confidence float64) float64 {
	if !(confidence > 0 && confidence < 1) {
		return math.NaN()
	}
	// Φ⁻¹((1+c)/2) = √2·erf⁻¹(c).
	return m.Scale()*math.Sqrt2*math.Erfinv(confidence) + 2*m.granularity
}

// Epsilon returns ε.
func (m *Gaussian) Epsilon() float64 { return m.epsilon }

// Delta returns δ.
func (m *Gaussian) Delta() float64 { return m.delta }

// Rho returns Δ²/(2σ²) with Δ the sensitivity after grid rounding: the
// discrete Gaussian with integer shifts of L2 norm Δ/γ is ρ-zCDP for exactly
// this ρ (Canonne et al. 2020, concentrated DP of the discrete Gaussian,
// which covers the multivariate case; Bun and Steinke 2016, Proposition 1.6,
// for the continuous Gaussian).
func (m *Gaussian) Rho() float64 {
	s := m.Scale()
	return m.effective * m.effective / (2 * s * s)
}

// Name returns "gaussian".
func (m *Gaussian) Name() string { return "gaussian" }
