package train

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/dpproxy/dpproxy/mechanism"
)

// Methods.
const (
	MethodObjective = "objective" // Chaudhuri et al. 2011, Algorithm 2 (the default)
	MethodOutput    = "output"    // Chaudhuri et al. 2011, Algorithm 1
)

// DefaultLambdas are the candidates of AutoLambda when Options.Lambdas is
// empty: a decade apart, as in Chaudhuri et al. (2011), Section 7.
var DefaultLambdas = []float64{1e-4, 1e-3, 1e-2, 1e-1}

// Options configures Fit.
type Options struct {
	// Epsilon is the privacy parameter of the whole fit, count and tuning
	// included, for the add/remove relation. +Inf trains without privacy (a
	// baseline; never release such a model).
	Epsilon float64
	// Delta is accepted for symmetry with other releases; both methods are
	// pure ε-DP, so the model spends and reports δ = 0.
	Delta float64
	// Lambda is the L2 regulariser λ per row (> 0), unless AutoLambda.
	Lambda float64
	// AutoLambda chooses λ from Lambdas privately (Chaudhuri et al. 2011,
	// Algorithm 4) within the same Epsilon.
	AutoLambda bool
	Lambdas    []float64
	// Method is MethodObjective (also when empty) or MethodOutput.
	Method string
	// Kernel, when set, trains on random Fourier features of the RBF kernel.
	Kernel *RFFOptions
	// PublicRows, when > 0, is a row count that is already public or was
	// released with DP before (post-processing): Fit uses it as N and spends
	// nothing on counting. It need not equal the true count; it only scales
	// the regulariser.
	PublicRows int64

	// weaken divides every noise by this factor when > 1. Only the privacy
	// audit sets it, to show that the audit can fail.
	weaken float64
}

func (o Options) validate() error {
	if !(o.Epsilon > 0) {
		return fmt.Errorf("train: epsilon must be positive, not %v", o.Epsilon)
	}
	if !(o.Delta >= 0 && o.Delta < 1) {
		return fmt.Errorf("train: delta must be in [0, 1), not %v", o.Delta)
	}
	switch o.Method {
	case "", MethodObjective, MethodOutput:
	default:
		return fmt.Errorf("train: unknown method %q; use %q or %q", o.Method, MethodObjective, MethodOutput)
	}
	if o.AutoLambda {
		if len(o.Lambdas) > 20 {
			return fmt.Errorf("train: %d candidate lambdas; at most 20 (each one takes a share of the rows)", len(o.Lambdas))
		}
		for _, l := range o.Lambdas {
			if err := checkLambda(l); err != nil {
				return err
			}
		}
	} else if err := checkLambda(o.Lambda); err != nil {
		return err
	}
	if o.PublicRows < 0 {
		return fmt.Errorf("train: public row count must not be negative, not %d", o.PublicRows)
	}
	return nil
}

func checkLambda(l float64) error {
	if !(l > 0) || math.IsInf(l, 1) {
		return fmt.Errorf("train: lambda must be positive and finite, not %v", l)
	}
	return nil
}

// Fit trains a logistic regression model on d: ε-differentially private for
// the add/remove relation (see the package documentation) unless Epsilon is
// +Inf. Every row's label is its boolean; the loss is the logistic loss.
func Fit(ctx context.Context, d *Data, opts Options) (*Model, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.Method == "" {
		opts.Method = MethodObjective
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	m := &Model{
		Inputs:  d.enc.Features(),
		Epsilon: opts.Epsilon,
		Method:  opts.Method,
	}
	var des design = linearDesign{d: d}
	if opts.Kernel != nil {
		m.RFF = &RFFParams{Components: opts.Kernel.Components, Gamma: opts.Kernel.Gamma, Seed: seed32()}
		fm, err := newRFFMap(d.enc, *m.RFF)
		if err != nil {
			return nil, err
		}
		if des, err = fm.materialise(d); err != nil {
			return nil, err
		}
	}

	eps := opts.Epsilon
	n, err := rowCount(d, &opts, &eps)
	if err != nil {
		return nil, err
	}
	m.Rows = int64(n)

	if opts.AutoLambda {
		m.RawWeights, m.Lambda, err = tune(ctx, des, n, eps, opts)
	} else {
		m.Lambda = opts.Lambda
		m.RawWeights, err = fitOne(ctx, des, n, opts.Lambda, eps, opts)
	}
	if err != nil {
		return nil, err
	}
	m.setWeights(d.enc)
	return m, nil
}

// rowCount returns N, the normaliser of the objective, and takes what it
// spends from *eps. Without privacy it is the true count.
func rowCount(d *Data, opts *Options, eps *float64) (float64, error) {
	switch {
	case math.IsInf(*eps, 1):
		return max(float64(d.Len()), 1), nil
	case opts.PublicRows > 0:
		return float64(opts.PublicRows), nil
	}
	// A row count has sensitivity 1 under add/remove; the discrete Laplace
	// mechanism releases it ε-DP (Ghosh, Roughgarden, Sundararajan 2009).
	// The mechanism's noise has a smallest scale; spending less than the
	// share on a huge ε only helps privacy.
	countEps := min(countShare**eps, 1<<19)
	lap, err := mechanism.NewLaplace(countEps, 1)
	if err != nil {
		return 0, fmt.Errorf("train: noise for the row count: %w", err)
	}
	*eps -= countShare * *eps
	// Clamping is post-processing; N only needs to be positive.
	return float64(max(lap.AddNoiseInt(int64(d.Len())), 1)), nil
}

// fitOne trains one model with regulariser lambda and privacy eps on des,
// normalised by n.
func fitOne(ctx context.Context, des design, n, lambda, eps float64, opts Options) ([]float64, error) {
	weaken := max(opts.weaken, 1)
	if math.IsInf(eps, 1) {
		// Without privacy any tight gradient norm will do.
		return minimise(ctx, newObjective(des, n, lambda, nil), 1e-8)
	}
	switch opts.Method {
	case MethodOutput:
		gamma := outputGamma(n)
		w, err := minimise(ctx, newObjective(des, n, lambda, nil), gamma)
		if err != nil {
			return nil, err
		}
		addTo(w, sampleBall(len(w), weaken*outputRate(eps, n, lambda, gamma)))
		return w, nil
	default:
		ampEps := ampShare * eps
		cal := calibrateObjective(eps-ampEps, n, lambda)
		b := sampleBall(des.dim(), weaken*cal.rate)
		gamma := objectiveGamma(ampEps, cal.rate, n)
		w, err := minimise(ctx, newObjective(des, n, lambda+cal.delta, b), gamma)
		if err != nil {
			return nil, err
		}
		addTo(w, sampleBall(len(w), weaken*ampRate(ampEps, lambda+cal.delta, gamma)))
		return w, nil
	}
}

func addTo(w, v []float64) {
	for j := range w {
		w[j] += v[j]
	}
}

// tune is the private parameter tuning of Chaudhuri et al. (2011), Section 6,
// Algorithm 4: the rows are split at random into one part per candidate λ and
// a held-out part; each part trains one eps-DP model, each model's mistakes on
// the held-out part are counted, and the exponential mechanism picks one.
// A row lies in exactly one part, so adding or removing it changes one model
// (eps-DP, the choice being post-processing of it) or the held-out counts,
// each by at most 1 (the exponential mechanism is eps-DP for sensitivity 1):
// eps in total (their Theorem 18). Each part is normalised by n/(parts) as
// the split is uniform.
func tune(ctx context.Context, des design, n, eps float64, opts Options) ([]float64, float64, error) {
	lambdas := opts.Lambdas
	if len(lambdas) == 0 {
		lambdas = DefaultLambdas
	}
	lambdas = slices.Clone(lambdas)
	k := len(lambdas) + 1
	parts := randomParts(des.len(), k)
	held := subset(des, parts[k-1])
	partN := max(n/float64(k), 1)
	models := make([][]float64, len(lambdas))
	mistakes := make([]int, len(lambdas))
	for i, l := range lambdas {
		w, err := fitOne(ctx, subset(des, parts[i]), partN, l, eps, opts)
		if err != nil {
			return nil, 0, fmt.Errorf("train: tuning lambda %v: %w", l, err)
		}
		models[i] = w
		mistakes[i] = countMistakes(held, w)
	}
	e := eps
	if opts.weaken > 1 {
		e *= opts.weaken
	}
	i := exponentialMechanism(mistakes, e)
	return models[i], lambdas[i], nil
}

// countMistakes returns how many rows of des w classifies wrongly (score 0
// counts as a mistake).
func countMistakes(des design, w []float64) int {
	o := newObjective(des, 1, 0, nil)
	var z int
	for i := range des.len() {
		if o.margin(i, w) <= 0 {
			z++
		}
	}
	return z
}
