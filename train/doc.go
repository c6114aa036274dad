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
// depend on it, is not add/remove-DP at any ε. So Fit first releases the
// label histogram (rows with a true and with a false label) with the discrete
// Laplace mechanism on 5% of ε (a row is in one bin: sensitivity 1, parallel
// composition), and when that histogram says N·ε is too small for the weights
// to carry signal, a second one on 75% of ε (see smallData; the split depends
// only on the first release, so adaptive composition applies). N = pos + neg
// normalises the objective and is reported as Rows; p̂ = (pos + ½)/(N + 1)
// gives the offset o = logit(p̂), added to every margin:
//
//	J(w) = (1/N)·[Σ_i ℓ(y_i(wᵀx_i + o)) + bᵀw] + (λ/2)‖w‖².
//
// As a function of w the loss still has |ℓ'| ≤ 1 and 0 ≤ ℓ” ≤ 1/4, so the
// paper's calibration holds with o fixed; o and N are DP releases used as
// public parameters, so the whole is ε-DP by adaptive sequential composition.
// The offset is folded into the released intercept. Its purpose: when N·ε is
// small the noise swamps the data's gradient, and a large λ then shrinks the
// weights to the majority class instead of to the sign of the noise.
// Options.PublicRows skips the histogram (and the offset).
//
// With N fixed, the paper's proofs go through for add/remove with half
// the replace-one sensitivities (see calibrate.go): objective perturbation
// uses ε' = ε − log(1 + c/(Nλ)) and noise density ∝ exp(−(ε'/Δ)‖b‖),
// output perturbation sensitivity 1/(Nλ). With the ℓ2 norm and Δ = 1 that is
// exactly the paper's calibration for replace-one at 2ε, consistent with the
// implication above.
//
// # The objective's noise
//
// Chaudhuri et al. draw b with density ∝ exp(−ε'‖b‖₂); their proof uses the
// norm only to bound how far one row's gradient ℓ'·y·x moves b, so any norm
// in which that gradient has norm ≤ Δ works with density ∝ exp(−(ε'/Δ)‖b‖)
// (the K-norm mechanism of Hardt and Talwar 2010). One-hot rows are sparse:
// ‖x‖₁ ≤ K = √(features + 1), so b with independent Laplace(K/ε')
// coordinates (ℓ1, Δ = K) is as private and, on Adult, half as large along
// every row as the ℓ2 noise. Fit picks the norm from public quantities
// (2K² < dim + 1; see objectiveNoise); random Fourier features keep ℓ2.
//
// # The regulariser
//
// Without a λ, Fit sets λ = √v/(N·ε) from public quantities (v the noise's
// variance along a row at ε = 1): the noise then moves a row's margin by
// about one logit at every N and ε, and on Adult that λ sits on the plateau
// of a half-decade sweep at every N·ε measured (see defaultLambda). With
// AutoLambda the paper's Algorithm 4 chooses among multiples of it.
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
// # The memory cap
//
// A caller that streams rows from a database (dpproxy's TRAIN) releases the
// label histogram first ([ReleaseLabels], from an aggregate the database
// computes, with the shares of ε above), plans a Poisson sample that fits the
// byte cap from its N̂ ([PlanSample]), loads the rows through
// [NewSampledData] (a coin per row; never an error on a value or on the cap)
// and fits with Options.Labels and Options.Sample. The fit is calibrated at
// the ε the histogram left, amplified by the sampling rate (Balle, Barthe,
// Gaboardi 2018), and normalised by the public q·N̂. The cap can still drop a
// kept row with probability below 2⁻⁴⁰/(1 + e^ε) for every database, so such
// a model is (ε, δ)-DP with δ = [DropDelta] = 2⁻⁴⁰ ≈ 9.1e-13, reported in
// Model.Delta and Model.Sample. See sample.go for the proof sketch.
//
// # Limits
//
// Released raw weights are snapped to a power-of-two grid Λ, the smallest
// power of two at least the scale of the last noise added (the minimisation
// noise, or output perturbation's noise), as in Mironov's snapping mechanism
// ("On significance of the least significant bits for differential privacy",
// CCS 2012); Λ depends only on public quantities, so snapping is
// post-processing, and Model.Grid reports it. This removes the low-order bits
// his floating-point attack reads, but it is not his theorem: that needs
// Laplace noise and values clamped to a public bound, and here the noise is
// sampled in floating point (Gamma, normal and exponential variates from
// crypto/rand, not an exact discrete sampler) and the weights are not
// clamped. The label counts are exact discrete Laplace (package mechanism).
// If the solver fails to reach γ (not seen for these strongly convex
// objectives) Fit returns an error after the noise was drawn; the caller
// should still charge the budget. The rule that moves ε to the label
// histogram on small data (smallData) was calibrated on Adult.
package train
