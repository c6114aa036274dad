package train

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// Choosing the regulariser λ: by default from public quantities alone
// (defaultLambda), with AutoLambda privately from candidates (tune).

// autoFactors are AutoLambda's candidates when Options.Lambdas is empty, as
// multiples of the default λ of a part: the default and a factor 8 either
// side. Each candidate costs a part of the rows (Algorithm 4 trains each on
// its own part), so few candidates that bracket the default, which already
// scales with N, ε and the noise, buy more than the paper's decade grid. The
// factor 8 is wider than the plateau measured on Adult (λ·N·ε a factor 3 off
// the optimum cost 1–3 points), so the tuning can move off it when the data
// want a much weaker or stronger regulariser.
var autoFactors = []float64{1.0 / 8, 1, 8}

// smallShrink multiplies the default λ when smallData says the weights
// cannot carry signal: the margins' noise drops to 1/16 of a logit, so the
// model predicts the released base rate, the majority class.
const smallShrink = 16

// defaultLambda is λ = √v/(N·ε) for the ε left for the weights, v the
// variance of the released weights' noise along a unit row direction at ε = 1
// (noiseAlongRow for objective perturbation; dim + 1 for output
// perturbation's ℓ2 ball, whose density ∝ exp(−ε·N·λ·‖v‖)).
//
// Why: the objective's noise b moves the minimiser by about b/(Nλ) in the
// directions the data do not pin down (J is λ-strongly convex; Chaudhuri et
// al. 2011, Lemma 7), so it moves the margin wᵀx of a row (‖x‖ ≤ 1) by a
// standard deviation of about √v/(ε·N·λ); output perturbation's noise moves
// it by the same expression with its own v. This λ makes that one logit: a
// weaker regulariser lets the noise decide predictions, a stronger one
// shrinks the real signal. λ·N·ε is then constant, which is what the
// measured optimum does: on Adult, over N·ε from 1,000 to 30,000 the best λ of
// a half-decade sweep had λ·N·ε between 3 and 5 (√v = 5.3 there), within a
// flat plateau. With five of its features (√v = 3.5) the sweep's best λ was
// within a factor 2.2 of this one at four (N, ε); with 200 random Fourier
// features (ℓ2 noise, √v = 14.2) this λ scored within half a point of the
// sweep's best at 5,000 and 15,000 rows. It is a default, not a theorem; it
// uses only N (released), ε and the design's public shape, so privacy does
// not depend on it.
//
// When smallData flagged the data, λ is smallShrink times larger; without
// privacy it is 1/N, scikit-learn's C = 1.
func defaultLambda(des design, stats labelStats, eps float64, method string) float64 {
	if math.IsInf(eps, 1) {
		return 1 / stats.n
	}
	v := noiseAlongRow(des)
	if method == MethodOutput {
		v = float64(des.dim() + 1)
	}
	l := math.Sqrt(v) / (stats.n * eps)
	if stats.small {
		l *= smallShrink
	}
	return l
}

// candidates returns the λ AutoLambda chooses from for a fit on n rows.
func candidates(des design, n, eps float64, opts Options) []float64 {
	if len(opts.Lambdas) > 0 {
		return opts.Lambdas
	}
	base := defaultLambda(des, labelStats{n: n}, eps, opts.Method)
	out := make([]float64, len(autoFactors))
	for i, f := range autoFactors {
		out[i] = f * base
	}
	return out
}

// tune is the private parameter tuning of Chaudhuri et al. (2011), Section 6,
// Algorithm 4: the rows are split at random into one part per candidate λ and
// a held-out part; each part trains one eps-DP model, each model's mistakes on
// the held-out part are counted, and the exponential mechanism picks one.
// A row lies in exactly one part, so adding or removing it changes one model
// (eps-DP, the choice being post-processing of it) or the held-out counts,
// each by at most 1 (the exponential mechanism is eps-DP for sensitivity 1):
// eps in total (their Theorem 18). Each part is normalised by n/(parts) as
// the split is uniform, and the default candidates are scaled to that n,
// which tune returns with the chosen model and λ.
func tune(ctx context.Context, des design, stats labelStats, eps float64, opts Options) (fitted, float64, float64, error) {
	k := len(candidates(des, stats.n, eps, opts)) + 1
	parts := randomParts(des.len(), k)
	held := subset(des, parts[k-1])
	part := labelStats{n: max(stats.n/float64(k), 1), offset: stats.offset}
	lambdas := slices.Clone(candidates(des, part.n, eps, opts))
	models := make([]fitted, len(lambdas))
	mistakes := make([]int, len(lambdas))
	for i, l := range lambdas {
		f, err := fitOne(ctx, subset(des, parts[i]), part, l, eps, opts)
		if err != nil {
			return fitted{}, 0, 0, fmt.Errorf("train: tuning lambda %v: %w", l, err)
		}
		models[i] = f
		mistakes[i] = countMistakes(held, f.w)
	}
	e := eps
	if opts.weaken > 1 {
		e *= opts.weaken
	}
	i := exponentialMechanism(mistakes, e)
	return models[i], lambdas[i], part.n, nil
}

// countMistakes returns how many rows of des w classifies wrongly (score 0
// counts as a mistake).
func countMistakes(des design, w []float64) int {
	o := newObjective(des, 1, 0, nil, 0)
	var z int
	for i := range des.len() {
		if o.margin(i, w) <= 0 {
			z++
		}
	}
	return z
}
