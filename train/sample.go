package train

import (
	"errors"
	"fmt"
	"math"
)

// Training under a memory cap, without a data-dependent failure.
//
// # The problem
//
// A training set is held in memory (Data), so its size must be capped. A cap
// that fails the statement when the rows exceed it is an oracle: with
// max_bytes set to one row, "TRAIN ... WHERE pid = 10 AND income > 20000"
// fails exactly when the person matches, and a binary search on max_bytes
// reads any count (Haeberlen, Pierce, Narayan, "Differential Privacy Under
// Fire", USENIX Security 2011: a state channel). Whether the rows fit must
// not be an outcome, and whatever replaces the failure must be priced.
//
// # The design
//
// k = ⌊max_bytes / RowBytes⌋ is a public row cap (RowBytes counts what the
// random Fourier features materialise). Before any row is loaded, the label
// histogram (positive and negative counts of the training rows, one aggregate
// the database computes) is released with the discrete Laplace noise Fit
// itself uses (ReleaseLabels: the same ε shares, so the total ε is unchanged).
// From its N̂ the plan (PlanSample) sets a Poisson sampling rate
//
//	q = min(1, μ* / (N̂ + t)),
//
// each streamed row is kept independently with probability q (a coin from
// crypto/rand, q rounded down to a multiple of 2⁻⁵³ so that the coin is
// exactly Bernoulli(q)), and the objective is normalised by the public q·N̂.
// If, despite the margins below, more than k rows are kept, the rest are
// dropped silently: never an error.
//
// # Privacy (proof sketch)
//
//  1. The histogram is ε_h-DP (see releaseLabels), and q, t, μ* and the
//     normaliser q·N̂ are functions of it and of public constants: from here
//     on they are fixed public parameters (adaptive sequential composition,
//     Dwork, Roth 2014, Theorem 3.16).
//  2. Untruncated, the sampled fit is M∘S_q, where S_q is Poisson
//     subsampling at rate q and M is Fit's weight release, ε₀-DP for
//     add/remove with its N fixed to q·N̂ (the package documentation).
//     Poisson subsampling maps an added or removed row to an added or
//     removed row (or to nothing), so M∘S_q is ε_fit-DP with
//     ε_fit = log(1 + q(e^ε₀ − 1)) (Balle, Barthe, Gaboardi, "Privacy
//     Amplification by Subsampling: Tight Analyses via Couplings and
//     Divergences", NeurIPS 2018, Theorem 8 for Poisson sampling under
//     add/remove; the same bound holds in both directions since
//     (1 + q(a−1))(a − q(a−1)) ≥ a for a = e^ε₀). Fit is therefore run at
//     ε₀ = log(1 + (e^ε_fit − 1)/q) (amplify), where ε_fit = ε − ε_h is what
//     the histogram left: subsampling only amplifies, and at q = 1 nothing
//     changes. Histogram and fit: ε in all, as before.
//  3. The cap. Let E be the event that more than k rows are kept. The
//     released model M' equals the untruncated M∘S_q off E, so for every
//     database D the two are within total variation P_D[E] ≤ β, and for
//     neighbours D, D' and any set O of outputs
//     P[M'(D) ∈ O] ≤ P[M(D) ∈ O] + β ≤ e^ε·P[M(D') ∈ O] + β
//     ≤ e^ε·P[M'(D') ∈ O] + (1 + e^ε)·β: the whole is (ε, δ)-DP with
//     δ = (1 + e^ε)·β. The plan sets β = DropDelta/(1 + e^ε), so δ is the
//     constant DropDelta = 2⁻⁴⁰ ≈ 9.1e-13 at every ε; the caller charges it.
//  4. Why P_D[E] ≤ β for every D, whatever its N. E needs either
//     (a) N̂ < N − t: N̂ = max(pos,0) + max(neg,0) is at least the sum of the
//     noisy counts, whose noise Y is a (weighted average of) sums of two
//     discrete Laplace variables of known scales τ_i; the Chernoff bound
//     P[Y ≤ −t] ≤ min_s e^{−st}·Π_i M_i(c_i·s)², with the discrete Laplace
//     moment generating function M(u) = (1−p)²/((1−pe^u)(1−pe^{−u})),
//     p = e^{−1/τ} (shortfall), sets t so that this is at most β/2; or
//     (b) N̂ + t ≥ N and still Binomial(N, q) > k: then E[kept] = qN ≤ μ*,
//     and the Chernoff bound P[X ≥ K] ≤ e^{−μ}(eμ/K)^K for a sum of
//     independent Bernoullis of mean at most μ < K (Mitzenmacher, Upfal,
//     "Probability and Computing", Theorem 4.4) with K = k + 1 sets μ*
//     (binomialMean) so that this is at most β/2. (At q = 1,
//     N ≤ N̂ + t ≤ μ* < K: nothing is dropped.)
//
// So with DropDelta = 2⁻⁴⁰ the probability that any row is dropped for the
// cap is below 2⁻⁴⁰/(1 + e^ε) for every database, and a TRAIN spends (ε, 2⁻⁴⁰).
// The cost of the margins is utility only: at ε = 1 (ε_h = 0.05) t is about
// 700 rows and μ* is k − O(√(k·30)), so a cap that binds keeps about
// k·N/(N + 700) rows in expectation, with no error and no refund.
//
// What this does not cover: the histogram and the rows are two reads of the
// backend (on one pinned connection); a database that changes between them
// is outside the neighbouring relation, as for any two statements.

// DropDelta is the δ a sampled training spends for its memory cap: the bound,
// scaled by (1 + e^ε), on the probability that the cap drops a sampled row.
const DropDelta = 0x1p-40

// RowBytes is the memory one training row takes: its compact form in Data
// (4 bytes per numeric feature, 2 per categorical one, 1 for the label) plus,
// with a kernel, its random Fourier features as float32. It depends only on
// the encoder and the options, so a cap can be checked before any row is read.
func RowBytes(enc *Encoder, kernel *RFFOptions) (int64, error) {
	des, err := shapeOf(enc, kernel)
	if err != nil {
		return 0, err
	}
	b := int64(4*len(enc.numeric) + 2*len(enc.groups) + 1)
	if kernel != nil {
		b += 4 * int64(des.dim())
	}
	return b, nil
}

// RowCap is k, the number of training rows that fit in maxBytes, or an error
// when not even one does (a refusal decided from public facts).
func RowCap(enc *Encoder, kernel *RFFOptions, maxBytes int64) (int64, error) {
	rb, err := RowBytes(enc, kernel)
	if err != nil {
		return 0, err
	}
	if maxBytes < rb {
		return 0, fmt.Errorf("train: the memory cap of %d bytes holds no row (one takes %d bytes)", maxBytes, rb)
	}
	return maxBytes / rb, nil
}

// shapeOf is a design without rows with the dimension and ℓ1 bound that the
// rows of enc (with a kernel, their random features) would have: enough for
// the public quantities (noiseAlongRow) that the label release needs.
func shapeOf(enc *Encoder, kernel *RFFOptions) (design, error) {
	if enc == nil {
		return nil, errors.New("train: no encoder")
	}
	if kernel == nil {
		return linearDesign{d: &Data{enc: enc}}, nil
	}
	if kernel.Components < 1 || kernel.Components > MaxComponents {
		return nil, fmt.Errorf("train: kernel components must be between 1 and %d, not %d", MaxComponents, kernel.Components)
	}
	if err := checkPositive("kernel gamma", kernel.Gamma); err != nil {
		return nil, err
	}
	if math.IsInf(kernel.Gamma, 1) {
		return nil, errors.New("train: kernel gamma must be finite")
	}
	return denseDesign{width: 2*((kernel.Components+1)/2) + 1}, nil
}

// MaxComponents caps the random Fourier features of a kernel model.
const MaxComponents = 1 << 16

// SamplePlan is how a training set is loaded under its memory cap: every
// field is public (a function of the label release, the cap and ε).
type SamplePlan struct {
	Cap      int64   // k: rows that fit in memory
	RowBytes int64   // memory per row (see RowBytes)
	MaxBytes int64   // the cap in bytes
	Rate     float64 // q: each row is kept with this probability
	// Rows is q·N̂ (at least 1), the normaliser of the objective.
	Rows float64
	// Epsilon is ε₀, the ε the fit on the sample is calibrated at: the ε the
	// label release left, amplified by the sampling (see amplify).
	Epsilon float64
	// Margin is t, Expected μ*: the sampling targets μ* rows out of N̂ + t.
	Margin, Expected float64
	// DropBound is β, a bound on the probability that the cap drops a kept
	// row, over the label noise and the coins, for every database.
	DropBound float64
	// Delta is (1 + e^ε)·β = DropDelta: what the plan adds to the fit's δ.
	Delta float64
	// Total is the Options.Epsilon the plan was made for.
	Total float64
}

// PlanSample plans the loading of a training set after its label histogram
// was released (labels, from ReleaseLabels with the same opts): see the
// comment at the top of this file for the rate, the margins and the proof.
func PlanSample(enc *Encoder, opts Options, maxBytes int64, labels *LabelRelease) (*SamplePlan, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if labels == nil || labels.Total != opts.Epsilon {
		return nil, errors.New("train: plan a sample after releasing its label counts with the same ε")
	}
	rb, err := RowBytes(enc, opts.Kernel)
	if err != nil {
		return nil, err
	}
	k, err := RowCap(enc, opts.Kernel, maxBytes)
	if err != nil {
		return nil, err
	}
	p := &SamplePlan{Cap: k, RowBytes: rb, MaxBytes: maxBytes, Total: opts.Epsilon}
	n := labels.N()
	left := opts.Epsilon - labels.Epsilon
	if labels.exact {
		// Without privacy N is exact: sample to the cap, nothing dropped.
		p.Rate = min(1, float64(k)/n)
		p.Expected = float64(k)
	} else {
		// β = DropDelta/(1 + e^ε), half for each way E can happen.
		logHalf := math.Log(DropDelta) - softplus(opts.Epsilon) - math.Ln2
		p.DropBound = math.Exp(logHalf + math.Ln2)
		p.Delta = DropDelta
		p.Margin = labels.shortfall(logHalf)
		p.Expected = binomialMean(k+1, logHalf)
		p.Rate = min(1, p.Expected/(n+p.Margin))
	}
	// Round q down to a multiple of 2⁻⁵³: the coin (a uniform 53-bit
	// fraction below q) is then exactly Bernoulli(q), and a smaller q only
	// lowers the expected sample.
	p.Rate = math.Floor(p.Rate*0x1p53) / 0x1p53
	p.Rows = max(p.Rate*n, 1)
	p.Epsilon = amplify(left, p.Rate)
	return p, nil
}

// amplify returns ε₀ with log(1 + q(e^ε₀ − 1)) = eps: the ε at which a
// mechanism run on a Poisson sample at rate q is eps-DP (Balle et al. 2018).
// ε₀ = eps − log q + log(1 − (1−q)e^{−eps}), stable for large eps. At q = 0
// no row is read: the fit is data-independent, and eps is returned.
func amplify(eps, q float64) float64 {
	if q >= 1 || q <= 0 || math.IsInf(eps, 1) {
		return eps
	}
	return eps - math.Log(q) + math.Log1p(-(1-q)*math.Exp(-eps))
}

// softplus is log(1 + e^x) without overflow.
func softplus(x float64) float64 {
	if x > 30 {
		return x + math.Exp(-x)
	}
	return math.Log1p(math.Exp(x))
}

// shortfall returns t ≥ 0 with P[N̂ < N − t] ≤ e^logBeta, where N̂ is the
// released N (before its floor at 1) and N the true count, by the Chernoff
// bound on the release's noise (see the comment at the top of this file).
// Any s in the grid gives a valid bound; the grid only makes it tight.
func (r *LabelRelease) shortfall(logBeta float64) float64 {
	if r.exact || len(r.noise) == 0 {
		return 0
	}
	sMax := math.Inf(1)
	for _, z := range r.noise {
		sMax = min(sMax, 1/(z.scale*z.weight))
	}
	// log E[e^{−sY}] for Y = Σ c_i (Z_i⁺ + Z_i⁻), Z discrete Laplace with
	// p = e^{−1/τ}: 2·Σ_i log M(c_i·s).
	logMGF := func(s float64) float64 {
		var l float64
		for _, z := range r.noise {
			u, a := z.weight*s, 1/z.scale
			l += 2 * (2*math.Log(-math.Expm1(-a)) - math.Log(-math.Expm1(u-a)) - math.Log(-math.Expm1(-u-a)))
		}
		return l
	}
	const grid = 512
	logTail := func(t float64) float64 {
		best := 0.0
		for j := 1; j < grid; j++ {
			s := sMax * float64(j) / grid
			best = min(best, logMGF(s)-s*t)
		}
		return best
	}
	hi := 1.0
	for logTail(hi) > logBeta {
		hi *= 2
	}
	lo := 0.0
	for range 60 {
		mid := (lo + hi) / 2
		if logTail(mid) > logBeta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Ceil(hi)
}

// binomialMean returns the largest μ < K (found to within 1e-12 relative,
// rounded down) with e^{−μ}(eμ/K)^K ≤ e^logBeta: a sum of independent
// Bernoullis whose mean is at most μ reaches K with probability at most
// e^logBeta (Chernoff). With x = log(μ/K) the condition is
// K·(x + 1 − e^x) ≤ logBeta, increasing in x < 0.
func binomialMean(K int64, logBeta float64) float64 {
	k := float64(K)
	g := func(x float64) float64 { return k * (x + 1 - math.Exp(x)) }
	lo, hi := logBeta/k-1, 0.0 // g(lo) ≤ k·(lo + 1) = logBeta
	for range 200 {
		mid := (lo + hi) / 2
		if g(mid) <= logBeta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return k * math.Exp(lo) * (1 - 1e-12)
}
