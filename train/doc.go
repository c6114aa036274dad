// Package train fits differentially private logistic regression models:
// objective perturbation (Chaudhuri, Monteleoni, Sarwate, "Differentially
// Private Empirical Risk Minimization", JMLR 12, 2011, Algorithm 2, the
// default) and output perturbation (their Algorithm 1), with private choice of
// the regulariser (their Algorithm 4) and random Fourier features for an RBF
// kernel (their Algorithm 3), on gonum.
//
// # Use
//
// Describe the input columns from public information only ([Feature]: public
// bounds for numeric columns, public values for categorical ones), build an
// [Encoder], stream rows into a [Data] (bounded by a byte cap), and call
// [Fit]. The [Model] carries weights on the original scale of each column.
//
// # Neighbouring relation and the row count
//
// dpproxy's neighbouring relation is add/remove one row (one privacy unit; the
// caller must bound each unit to one row, e.g. privacy_unit: row, or train on
// one row per unit). The paper instead uses replace-one with a known n. Fit is
// ε-DP for add/remove, which implies 2ε for replace-one (a replacement is one
// removal and one addition).
//
// The true n is private: releasing it, or letting the noise or the objective
// depend on it, is not add/remove-DP at any ε. So Fit normalises the
// objective by N instead, a row count released with the discrete Laplace
// mechanism on 5% of ε (or Options.PublicRows when the caller already has a
// public or DP count). N is the only place n enters; the model reports N as
// Rows. With N fixed, the paper's proofs go through for add/remove with half
// the replace-one sensitivities (see calibrate.go): objective perturbation
// uses ε' = ε − log(1 + c/(Nλ)) and noise density ∝ exp(−ε'‖b‖), output
// perturbation sensitivity 1/(Nλ). That is exactly the paper's calibration for
// replace-one at 2ε, consistent with the implication above.
//
// # Exact minimisation
//
// The paper's proofs assume the exact minimiser. Fit minimises to a gradient
// norm γ fixed before the data are seen and checked afterwards, and adds a
// small output noise calibrated to γ (approximate minimum perturbation,
// Iyengar et al., "Towards Practical Differentially Private Convex
// Optimization", IEEE S&P 2019) on 2% of ε; γ is set so that this noise is
// about 3% of the objective noise's effect. Output perturbation adds 2γ/λ to
// its sensitivity instead.
//
// # Encoding
//
// Numeric values are clamped to their public bounds and mapped to [−1, 1];
// categorical ones one-hot over their public values; a bias column is added;
// every row is divided by the public constant √(numeric + categorical + 1),
// so ‖x‖ ≤ 1 for every row and the weights map exactly back to the original
// scale. See [Encoder].
//
// # Limits
//
// The noise is continuous (float64) and the released weights are not snapped
// to a grid, so the floating-point attacks of Mironov (2012) on textbook
// Laplace are not ruled out here as they are for the mechanism package's
// counts. If the solver fails to reach γ (not seen for these strongly convex
// objectives) Fit returns an error after the noise was drawn; the caller
// should still charge the budget.
package train
