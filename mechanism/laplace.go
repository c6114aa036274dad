package mechanism

import (
	"fmt"
	"math"
)

// Laplace is the Laplace mechanism (Dwork, McSherry, Nissim, Smith 2006) with
// discrete Laplace noise on a power-of-two grid: ε-differentially private for
// a release of L1 sensitivity Δ₁.
type Laplace struct {
	epsilon     float64
	sensitivity float64
	granularity float64         // γ
	noise       discreteLaplace // in units of γ
	intShift    uint            // AddNoiseInt grid is 2^intShift
	intNoise    discreteLaplace // in units of 2^intShift
}

// NewLaplace returns a Laplace mechanism for one ε-DP release of a value (or
// a vector of at most MaxRoundedCoordinates values) with L1 sensitivity
// l1Sensitivity.
//
// The grid follows Google's laplace_noise.go: γ is the smallest power of two
// ≥ b/2^40 with b = Δ₁/ε. After rounding to the grid, neighbouring inputs
// differ by at most m = Δ₁/γ + MaxRoundedCoordinates grid steps in L1, and the
// discrete Laplace P[k] ∝ exp(−|k|/τ) has privacy loss at most m/τ for shifts
// of L1 norm m (the ratio of P[k] and P[k+j] is exp(|j|/τ) at most), so
// τ = m/ε grid steps gives ε-DP. Google uses m = Δ₁/γ + 1 for one coordinate.
func NewLaplace(epsilon, l1Sensitivity float64) (*Laplace, error) {
	if err := checkEpsilon(epsilon); err != nil {
		return nil, err
	}
	if err := checkSensitivity("L1", l1Sensitivity); err != nil {
		return nil, err
	}
	b := l1Sensitivity / epsilon
	if !(b >= minLaplaceScale && b <= 0x1p900) {
		return nil, fmt.Errorf("mechanism: Laplace scale l1Sensitivity/epsilon = %v/%v = %v is outside the supported range [2^-20, 2^900]", l1Sensitivity, epsilon, b)
	}
	g := ceilPowerOfTwo(b / laplaceGranularityParam)
	m := l1Sensitivity/g + MaxRoundedCoordinates
	noise, err := newDiscreteLaplace(m / epsilon)
	if err != nil {
		return nil, fmt.Errorf("mechanism: Laplace noise for epsilon %v and L1 sensitivity %v: %w", epsilon, l1Sensitivity, err)
	}
	l := &Laplace{epsilon: epsilon, sensitivity: l1Sensitivity, granularity: g, noise: noise}
	l.intShift = integerGrid(g)
	if g >= 1 {
		l.intNoise = noise
	} else {
		// Integers need no rounding on the unit grid, so neighbouring
		// integer inputs differ by at most Δ₁ ≤ ε·Scale() and the float
		// scale, in units of 1, is already sufficient.
		if l.intNoise, err = newDiscreteLaplace(l.Scale()); err != nil {
			return nil, fmt.Errorf("mechanism: integer Laplace noise for epsilon %v and L1 sensitivity %v: %w", epsilon, l1Sensitivity, err)
		}
	}
	return l, nil
}

// AddNoise returns x rounded to the grid plus discrete Laplace noise.
func (l *Laplace) AddNoise(x float64) float64 {
	k := withSource(l.noise.sample)
	return addOnGrid(x, l.granularity, k)
}

// AddNoiseInt returns x plus discrete Laplace noise on the integer grid.
func (l *Laplace) AddNoiseInt(x int64) int64 {
	k := withSource(l.intNoise.sample)
	return addOnIntGrid(x, l.intShift, k)
}

// Scale returns the Laplace scale b actually used, ≥ l1Sensitivity/epsilon.
func (l *Laplace) Scale() float64 { return l.noise.scale() * l.granularity }

// Granularity returns the grid step γ of AddNoise.
func (l *Laplace) Granularity() float64 { return l.granularity }

// ConfidenceHalfWidth returns b·ln(1/(1−c)) + 2γ. For the discrete Laplace
// with ratio p = e^(−γ/b), P[|K| ≥ k] = 2p^k/(1+p) ≤ p^(k−1), so
// P[|K·γ| > w + γ] ≤ e^(−w/b) = 1−c for w = b·ln(1/(1−c)); the second γ covers
// the rounding of x to the grid (at most γ/2).
func (l *Laplace) ConfidenceHalfWidth(confidence float64) float64 {
	if !(confidence > 0 && confidence < 1) {
		return math.NaN()
	}
	return -l.Scale()*math.Log1p(-confidence) + 2*l.granularity
}

// Epsilon returns ε.
func (l *Laplace) Epsilon() float64 { return l.epsilon }

// Delta returns 0: the Laplace mechanism is pure DP.
func (l *Laplace) Delta() float64 { return 0 }

// Rho returns ε²/2: ε-DP implies (ε²/2)-zCDP (Bun and Steinke 2016,
// "Concentrated Differential Privacy: Simplifications, Extensions, and Lower
// Bounds", TCC, Proposition 1.4).
func (l *Laplace) Rho() float64 { return l.epsilon * l.epsilon / 2 }

// Name returns "laplace".
func (l *Laplace) Name() string { return "laplace" }
