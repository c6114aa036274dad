package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Methods.
const (
	MethodObjective = "objective" // Chaudhuri et al. 2011, Algorithm 2 (the default)
	MethodOutput    = "output"    // Chaudhuri et al. 2011, Algorithm 1
)

// Options configures Fit.
type Options struct {
	// Epsilon is the privacy parameter of the whole fit, count and tuning
	// included, for the add/remove relation. +Inf trains without privacy (a
	// baseline; never release such a model).
	Epsilon float64
	// Delta is accepted for symmetry with other releases; both methods are
	// pure ε-DP, so the model spends and reports δ = 0 — except a fit on a
	// sample planned for a memory cap (Sample), which reports DropDelta.
	Delta float64
	// Lambda is the L2 regulariser λ per row (> 0); 0 sets it from N and ε
	// (see defaultLambda). Ignored with AutoLambda.
	Lambda float64
	// AutoLambda chooses λ from Lambdas privately (Chaudhuri et al. 2011,
	// Algorithm 4) within the same Epsilon. Empty Lambdas: multiples of the
	// default λ (see autoFactors).
	AutoLambda bool
	Lambdas    []float64
	// Method is MethodObjective (also when empty) or MethodOutput.
	Method string
	// Kernel, when set, trains on random Fourier features of the RBF kernel.
	Kernel *RFFOptions
	// PublicRows, when > 0, is a row count that is already public or was
	// released with DP before (post-processing): Fit uses it as N and spends
	// nothing on counting. It need not equal the true count; it only scales
	// the regulariser. No base rate is released then: the offset is 0.
	PublicRows int64
	// Labels, when set, is the label histogram released before the rows
	// were loaded (ReleaseLabels, for this Epsilon): Fit uses it instead of
	// releasing its own, and takes its ε from Epsilon.
	Labels *LabelRelease
	// Sample, when set, is the plan the rows were loaded with
	// (NewSampledData; PlanSample with Labels): Fit normalises by its q·N̂,
	// calibrates the fit at its amplified ε and reports its δ. Needs Labels.
	Sample *SamplePlan

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
	} else if o.Lambda != 0 {
		if err := checkLambda(o.Lambda); err != nil {
			return err
		}
	}
	if o.Sample != nil && (o.Labels == nil || o.Sample.Total != o.Epsilon) {
		return errors.New("train: a sampled fit needs the label counts released for its plan (Options.Labels) at the same ε")
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
	stats, err := labelHistogram(d, &opts, &eps, noiseAlongRow(des))
	if err != nil {
		return nil, err
	}
	if p := opts.Sample; p != nil {
		// The rows are a Poisson sample at rate q: the objective is
		// normalised by the public q·N̂, and the fit is calibrated at the
		// amplified ε₀ (see sample.go), so that the sampled fit is ε-DP
		// for what the histogram left; the cap's δ is reported.
		stats.n = p.Rows
		eps = p.Epsilon
		m.Delta = p.Delta
		m.Sample = &SampleInfo{Rate: p.Rate, Cap: p.Cap, DropBound: p.DropBound, FitEpsilon: p.Epsilon}
	}
	m.Rows = int64(stats.n)

	var f fitted
	if opts.AutoLambda && !stats.small {
		var rows float64
		f, m.Lambda, rows, err = tune(ctx, des, stats, eps, opts)
		m.Rows = int64(rows)
	} else {
		m.Lambda = opts.Lambda
		switch {
		case opts.AutoLambda && len(opts.Lambdas) > 0:
			// Too few rows for the weights, and so for the held-out counts
			// to tell the candidates apart: the strongest regulariser, which
			// shrinks the model onto the released base rate, on all the
			// rows. The choice depends only on the histogram's release.
			m.Lambda = slices.Max(opts.Lambdas)
		case opts.AutoLambda || m.Lambda == 0:
			// No λ given, or AutoLambda on small data with the default
			// candidates: the default, smallShrink times larger on small data.
			m.Lambda = defaultLambda(des, stats, eps, opts.Method)
		}
		f, err = fitOne(ctx, des, stats, m.Lambda, eps, opts)
	}
	if err != nil {
		return nil, err
	}
	// Snapping is post-processing of the noisy weights with a grid chosen
	// from public quantities (see gridFor).
	snap(f.w, f.grid)
	m.RawWeights, m.Grid = f.w, f.grid
	m.setWeights(d.enc)
	return m, nil
}

// fitted is one trained weight vector and the grid its release is snapped
// to (0 without privacy).
type fitted struct {
	w    []float64
	grid float64
}

// fitOne trains one model with regulariser lambda and privacy eps on des,
// normalised by stats.n with stats.offset added to every margin. The offset
// is folded into the bias weight (w_bias += o/x_bias) so that the returned
// weights score a row on their own.
func fitOne(ctx context.Context, des design, stats labelStats, lambda, eps float64, opts Options) (fitted, error) {
	weaken := max(opts.weaken, 1)
	n := stats.n
	var f fitted
	var err error
	switch {
	case math.IsInf(eps, 1):
		// Without privacy any tight gradient norm will do.
		f.w, err = minimise(ctx, newObjective(des, n, lambda, nil, stats.offset), 1e-8)
	case opts.Method == MethodOutput:
		gamma := outputGamma(n)
		if f.w, err = minimise(ctx, newObjective(des, n, lambda, nil, stats.offset), gamma); err != nil {
			return fitted{}, err
		}
		rate := outputRate(eps, n, lambda, gamma)
		addTo(f.w, sampleBall(len(f.w), weaken*rate))
		f.grid = gridFor(rate)
	default:
		ampEps := ampShare * eps
		cal := calibrateObjective(eps-ampEps, n, lambda)
		b := objectiveNoise(des, weaken*cal.rate)
		gamma := objectiveGamma(ampEps, noiseNorm(des, cal.rate), n, des.dim())
		if f.w, err = minimise(ctx, newObjective(des, n, lambda+cal.delta, b, stats.offset), gamma); err != nil {
			return fitted{}, err
		}
		rate := ampRate(ampEps, lambda+cal.delta, gamma)
		addTo(f.w, sampleBall(len(f.w), weaken*rate))
		f.grid = gridFor(rate)
	}
	if err != nil {
		return fitted{}, err
	}
	f.w[len(f.w)-1] += stats.offset / des.bias()
	return f, nil
}

func addTo(w, v []float64) {
	for j := range w {
		w[j] += v[j]
	}
}
