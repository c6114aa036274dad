package train

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/mechanism"
)

// labelStats are the released row count and base rate that the fit treats as
// public parameters: N normalises the objective, offset = logit(p̂) is added
// to every margin so that a heavily regularised model falls back to the
// majority class rather than to the sign of the noise.
type labelStats struct {
	n      float64
	offset float64
	// small is smallData's verdict on the first histogram: the weights are
	// not expected to carry signal.
	small bool
}

// LabelRelease is a released label histogram: how many training rows have a
// true and how many a false label, with the discrete Laplace noise of
// [ReleaseLabels]. Everything in it is a DP release or a public parameter.
// Pass it as Options.Labels to fit on rows whose counts were released before
// they were loaded (e.g. by an aggregate the database computed), so that Fit
// does not release them again: the ε it spent is taken from Options.Epsilon
// as if Fit had spent it.
type LabelRelease struct {
	// Pos and Neg are the released counts, clamped at 0.
	Pos, Neg float64
	// Epsilon is what the release spent, of Total.
	Epsilon float64
	// Total is the Options.Epsilon the release was made for.
	Total float64
	// Small is smallData's verdict (the second histogram was released).
	Small bool
	// noise describes each release averaged into Pos and Neg: its weight in
	// the average and its discrete Laplace scale (public: functions of ε).
	noise []labelNoise
	// exact: without privacy (ε = +Inf); the counts are the true ones.
	exact bool
}

type labelNoise struct{ weight, scale float64 }

// N is the released row count, at least 1.
func (r *LabelRelease) N() float64 { return r.stats().n }

func (r *LabelRelease) stats() labelStats {
	s := statsOf(r.Pos, r.Neg)
	s.small = r.Small
	return s
}

// ReleaseLabels releases the label histogram of a training set whose exact
// counts are pos and neg, for a fit with opts on rows encoded by enc, as Fit
// itself would (labelShare of opts.Epsilon, and refineShare more on small
// data). Only enc's and opts' public shape (dimension, kernel, method) is
// used besides the counts.
func ReleaseLabels(pos, neg int64, enc *Encoder, opts Options) (*LabelRelease, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	des, err := shapeOf(enc, opts.Kernel)
	if err != nil {
		return nil, err
	}
	return releaseLabels(pos, neg, opts.Epsilon, noiseAlongRow(des))
}

// labelHistogram releases how many rows of d have a true and how many a
// false label and takes what it spends from *eps. Without privacy the counts
// are exact; with Options.PublicRows the caller's N is used and nothing is
// spent (no base rate is known then, so the offset is 0); with
// Options.Labels the caller's release is used and its ε taken.
func labelHistogram(d *Data, opts *Options, eps *float64, noiseAlongRow float64) (labelStats, error) {
	switch {
	case opts.Labels != nil:
		if opts.Labels.Total != opts.Epsilon {
			return labelStats{}, fmt.Errorf("train: the label counts were released for ε = %v, not the fit's %v", opts.Labels.Total, opts.Epsilon)
		}
		*eps -= opts.Labels.Epsilon
		return opts.Labels.stats(), nil
	case math.IsInf(*eps, 1):
		pos, neg := d.labelCounts()
		return statsOf(float64(pos), float64(neg)), nil
	case opts.PublicRows > 0:
		return labelStats{n: float64(opts.PublicRows)}, nil
	}
	pos, neg := d.labelCounts()
	r, err := releaseLabels(pos, neg, *eps, noiseAlongRow)
	if err != nil {
		return labelStats{}, err
	}
	*eps -= r.Epsilon
	return r.stats(), nil
}

// releaseLabels is the label histogram's release at total ε.
//
// Privacy: a row lies in exactly one of the two bins, so adding or removing
// it changes one count by 1: the histogram has L1 sensitivity 1 and the
// discrete Laplace mechanism (Ghosh, Roughgarden, Sundararajan 2009) on each
// bin with the same ε_h is ε_h-DP for the pair (parallel composition,
// McSherry 2009, "Privacy integrated queries", Theorem 4). N = pos + neg and
// the offset are post-processing.
//
// The histogram is released once with labelShare of ε and, when its N says
// that N·ε is too small for the weights to carry signal (see smallData), a
// second time with refineShare of ε; the two are averaged with
// inverse-variance weights (post-processing). Whether the second release
// happens, and so how ε is split, depends only on the first release: the
// shares of every branch sum to at most ε, so the whole is ε-DP by adaptive
// sequential composition (Dwork, Roth 2014, Theorem 3.16; with parameters
// chosen from earlier outputs, the basic-composition filter of Rogers, Roth,
// Ullman, Vadhan, "Privacy Odometers and Filters: Pay-as-you-Go
// Composition", NeurIPS 2016). The fit then uses N and the offset as public
// parameters with the ε left.
func releaseLabels(p, n int64, total, noiseAlongRow float64) (*LabelRelease, error) {
	if math.IsInf(total, 1) {
		return &LabelRelease{Pos: float64(p), Neg: float64(n), Total: total, exact: true}, nil
	}
	r := &LabelRelease{Total: total}
	pos, neg, scale, err := noisyLabels(p, n, labelShare*total)
	if err != nil {
		return nil, err
	}
	r.Epsilon = labelShare * total
	r.noise = []labelNoise{{1, scale}}
	r.Small = smallData(pos+neg, total, noiseAlongRow)
	if r.Small {
		pos2, neg2, scale2, err := noisyLabels(p, n, refineShare*total)
		if err != nil {
			return nil, err
		}
		r.Epsilon += refineShare * total
		// Laplace noise of parameter ε has variance ∝ 1/ε²: weights ∝ ε².
		w1, w2 := labelShare*labelShare, refineShare*refineShare
		pos = (w1*pos + w2*pos2) / (w1 + w2)
		neg = (w1*neg + w2*neg2) / (w1 + w2)
		r.noise = []labelNoise{{w1 / (w1 + w2), scale}, {w2 / (w1 + w2), scale2}}
	}
	// Clamping a noisy count at 0 is post-processing.
	r.Pos, r.Neg = max(pos, 0), max(neg, 0)
	return r, nil
}

// noisyLabels releases the two label counts with the discrete Laplace
// mechanism at eps (sensitivity 1 each, one bin per row, so eps in all), and
// returns the noise's scale τ on the integers: P[noise = k] ∝ exp(−|k|/τ).
func noisyLabels(p, n int64, eps float64) (pos, neg, scale float64, err error) {
	// The mechanism's noise has a smallest scale; spending less than asked
	// on a huge ε only helps privacy.
	lap, err := mechanism.NewLaplace(min(eps, 1<<19), 1)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("train: noise for the label counts: %w", err)
	}
	return float64(lap.AddNoiseInt(p)), float64(lap.AddNoiseInt(n)), lap.Scale(), nil
}

// smallData reports whether a (noisy) row count n is too small at ε for the
// objective's weights to carry signal, so that ε is better spent on the base
// rate, the one thing such a model can predict with. noiseAlongRow is the
// variance of the objective's noise along a unit row direction times ε'²
// (2K² for the ℓ1 noise, dim + 1 for the ℓ2 ball, see objectiveNoise); the
// data's gradient along a row grows like n, the noise's like
// √noiseAlongRow/ε. Measured on Adult (noiseAlongRow = 28): at n·ε = 100
// even the best intercept chosen on the test set cannot make the noisy
// weights beat the majority class (76.4%; the top 5% of scores hold 34%
// positives), while at n·ε = 400 it reaches 79%. So the threshold is
// n·ε < 5·noiseAlongRow (140 on Adult). This is an engineering rule from that
// measurement, not a theorem; privacy does not depend on it.
func smallData(n, eps, noiseAlongRow float64) bool {
	return n*eps < smallDataFactor*noiseAlongRow
}

// statsOf turns (noisy) label counts into N and the offset. The base rate is
// estimated as (pos + ½)/(N + 1), the posterior mean of a Jeffreys Beta(½, ½)
// prior (Jeffreys 1946), so that an empty or one-sided histogram still gives
// a finite offset.
func statsOf(pos, neg float64) labelStats {
	n := max(pos+neg, 1)
	p := (pos + 0.5) / (pos + neg + 1)
	return labelStats{n: n, offset: math.Log(p / (1 - p))}
}
