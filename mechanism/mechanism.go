package mechanism

import (
	"fmt"
	"math"
)

// Mechanism adds noise calibrated to one release. Implementations are safe
// for concurrent use.
type Mechanism interface {
	// AddNoise rounds x to the grid and adds grid noise; the result is on
	// the grid (result/Granularity() is an integer). x must be finite; NaN
	// and ±Inf yield NaN.
	AddNoise(x float64) float64
	// AddNoiseInt releases an integer (a count) with noise on an integer
	// grid: max(1, Granularity()).
	AddNoiseInt(x int64) int64
	// Scale is the Laplace scale b or the Gaussian σ actually used; it is at
	// least the nominal value (sensitivity/ε, or the analytic σ) and larger
	// only by the grid-rounding margin (see MaxRoundedCoordinates).
	Scale() float64
	// Granularity is the power-of-two grid step γ of AddNoise.
	Granularity() float64
	// ConfidenceHalfWidth returns h such that |AddNoise(x) − x| ≤ h with
	// probability at least confidence, for confidence in (0, 1); NaN
	// otherwise.
	ConfidenceHalfWidth(confidence float64) float64
	Epsilon() float64
	Delta() float64
	// Rho is the zero-concentrated DP parameter ρ of one release.
	Rho() float64
	// Name is "laplace" or "gaussian".
	Name() string
}

var (
	_ Mechanism = (*Laplace)(nil)
	_ Mechanism = (*Gaussian)(nil)
)

func checkEpsilon(epsilon float64) error {
	if !(epsilon > 0) || math.IsInf(epsilon, 0) {
		return fmt.Errorf("mechanism: epsilon must be positive and finite, got %v", epsilon)
	}
	return nil
}

func checkSensitivity(kind string, sensitivity float64) error {
	if !(sensitivity > 0) || math.IsInf(sensitivity, 0) {
		return fmt.Errorf("mechanism: %s sensitivity must be positive and finite, got %v", kind, sensitivity)
	}
	return nil
}

func checkDelta(delta float64) error {
	if !(delta > 0 && delta < 1) {
		return fmt.Errorf("mechanism: delta must be in (0, 1), got %v", delta)
	}
	return nil
}
