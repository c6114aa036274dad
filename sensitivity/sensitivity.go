// Package sensitivity computes how much one privacy unit can change each noisy
// quantity dpproxy releases, from the policy's public bounds and contribution
// limits alone. It never looks at data.
//
// Neighbouring databases differ in all rows of one privacy unit (DESIGN.md).
// The backend SQL bounds each unit to at most MaxRows rows per group and at
// most MaxGroups groups (Wilson et al. 2020, "Differentially Private SQL with
// Bounded User Contribution", PoPETs, §3; Amin et al. 2019, "Bounding User
// Contributions", ICML). Under those bounds, for a quantity to which one row
// adds at most m in absolute value:
//
//	L∞ per group = MaxRows · m
//	L1 over groups = MaxGroups · MaxRows · m
//	L2 over groups = √MaxGroups · MaxRows · m
//
// (a unit changes at most MaxGroups coordinates, each by at most MaxRows·m).
package sensitivity

import (
	"fmt"
	"math"
)

// Contribution is the per-unit bound the backend SQL enforces.
type Contribution struct {
	// MaxRows is the most rows of one unit that reach one group's aggregate.
	MaxRows int
	// MaxGroups is the most groups one unit contributes to (L0). It is 1
	// for a query without GROUP BY.
	MaxGroups int
}

// Validate reports a contribution bound that cannot be used.
func (c Contribution) Validate() error {
	if c.MaxRows < 1 || c.MaxGroups < 1 {
		return fmt.Errorf("sensitivity: contribution bounds must be at least 1, got %d rows and %d groups per unit", c.MaxRows, c.MaxGroups)
	}
	return nil
}

// Sensitivity of one vector-valued release (one coordinate per group).
type Sensitivity struct {
	L1 float64 // for the Laplace mechanism
	L2 float64 // for the Gaussian mechanism
}

// perRow scales a per-row bound m into L1 and L2 over groups (package comment).
func perRow(m float64, c Contribution) Sensitivity {
	rows := float64(c.MaxRows)
	return Sensitivity{
		L1: float64(c.MaxGroups) * rows * m,
		L2: math.Sqrt(float64(c.MaxGroups)) * rows * m,
	}
}

// Count is COUNT(*) or COUNT(col): each row adds 1.
func Count(c Contribution) Sensitivity { return perRow(1, c) }

// Sum is SUM of values clamped to [lower, upper]: adding or removing a row
// changes the sum by at most max(|lower|, |upper|).
func Sum(lower, upper float64, c Contribution) Sensitivity {
	return perRow(math.Max(math.Abs(lower), math.Abs(upper)), c)
}

// CenteredSum is SUM(clamp(x) − mid) with mid = (lower+upper)/2, the numerator
// of AVG (and of VAR later): centring halves the per-row bound to
// (upper−lower)/2, which is why AVG is released as mid + Σ(x−mid)/n rather than
// Σx/n (the "normalised" mean of Google's dpagg.Mean and SmartNoise).
func CenteredSum(lower, upper float64, c Contribution) Sensitivity {
	return perRow((upper-lower)/2, c)
}

// DistinctUnits is the number of distinct units in each group, the quantity
// partition selection thresholds: a unit is counted once in each of at most
// MaxGroups groups.
func DistinctUnits(c Contribution) Sensitivity {
	return Sensitivity{L1: float64(c.MaxGroups), L2: math.Sqrt(float64(c.MaxGroups))}
}

// CenteredSquares is SUM((clamp(x) − mid)²), the second moment of VAR and
// STDDEV: one row adds at most ((upper−lower)/2)².
func CenteredSquares(lower, upper float64, c Contribution) Sensitivity {
	h := (upper - lower) / 2
	return perRow(h*h, c)
}
