package mechanism

import (
	"errors"
	"fmt"
	"math"
)

// Quantile releases DP quantiles (MIN, MAX, MEDIAN, PERCENTILE_CONT) of a
// column with public bounds [lower, upper] from a histogram with equal-width
// bins that the backend computes after clamping and contribution bounding. It
// is the exponential mechanism (McSherry and Talwar 2007, "Mechanism Design
// via Differential Privacy", FOCS) over the bins, the histogram form of
// Smith's quantile mechanism (Smith 2011, "Privacy-preserving statistical
// estimation with optimal convergence rates", STOC; also Google's
// differential-privacy library): pick a bin with probability
// ∝ exp(−ε·d(b)/(2Δ)), then a uniform point inside it. Safe for concurrent use.
//
// # Utility
//
// Number the clamped values x₍₁₎ ≤ … ≤ x₍ₙ₎. Bin b holds the values of index
// L_b+1 … U_b, where L_b = Σ_{j<b} c_j is the count below it and
// U_b = L_b + c_b. The target is the index
//
//	h = 1 + T + p·(n − 1),   T = t·(1 − 2p),
//
// that is PERCENTILE_CONT(p) (PostgreSQL's definition, which interpolates at
// the 0-based position p·(n−1)) of the data with t values trimmed from each
// end. A bin's distance to the target is the rank distance from h to the
// indices it holds:
//
//	d(b) = max(0, L_b + 1 − h, h − U_b),
//
// zero for the bin holding the target; an empty bin (U_b = L_b) is at least
// ½ away. The trim t = (2Δ/ε)·ln K (K bins) is data-independent. Without it
// MIN (p = 0) would be hopeless: every empty bin below the data's minimum is
// then only one rank from the target, and with many such bins the mechanism
// lands below the data almost surely (the same happens to Smith's mechanism,
// whose interval [lower, x₍₁₎] has the optimal rank). Trimming pushes the
// target t ranks inward, so each empty bin outside the data is ≥ t + 1 ranks
// away and K of them together weigh less than the target bin; t is the
// exponential mechanism's own rank error, so nothing is lost that the noise
// had not already blurred. For the median T = 0.
//
// # Sensitivity
//
// Adding one privacy unit adds 0 ≤ a ≤ a′ ≤ s ≤ maxRows rows: a below bin b,
// a′ in or below it, s in total. Then L_b + 1 − h changes by a − p·s ∈
// [−p·s, (1−p)·s] and h − U_b by p·s − a′ ∈ [−(1−p)·s, p·s], so d(b), a
// 1-Lipschitz function of the two, changes by at most
//
//	Δ = max(p, 1−p)·maxRows,
//
// which is maxRows for MIN and MAX and maxRows/2 for the median: n (which
// enters through h) needs no budget of its own, its change is part of Δ. The
// loss in one group is ε·(rows the unit has there)/maxRows, so when maxRows
// bounds a unit's rows over all groups, one Quantile per group costs ε in
// total for a GROUP BY (the groups' losses add to at most ε).
//
// # Exact sampling
//
// Floating-point exp() in the weights could leak through rounding (Mironov
// 2012; Ilvento 2020, "Implementing the Exponential Mechanism with Base-2
// Differential Privacy", CCS), so no weight is ever computed. p is rounded to
// a multiple of 2^-24 and T to one of 2^-24, which makes 2^24·d(b) an integer
// D_b. The exponent per unit of D is rounded down to c = C/2^S ≤ ε/(2·2^24·Δ)
// with a 32-bit C, so every exponent c·D_b is an exact rational and neighbours'
// exponents differ by at most ε/2 exactly. A bin is proposed uniformly and
// accepted with probability exp(−c·(D_b − D_min)) by the exact Bernoulli
// sampler of Canonne, Kamath, Steinke 2020 (Algorithm 1): by the usual
// rejection argument the accepted bin has exactly the distribution
// ∝ exp(−c·D_b). D_b is capped at a data-independent D_cap, at least X = 128
// nats above the worst possible D_min, so that the rationals fit in 128 bits;
// min(·, D_cap) is 1-Lipschitz, so the privacy proof is unchanged, and a
// capped bin has weight below e^-128 next to the best one anyway.
//
// The point inside the bin is lower + (b + U)·w for a uniform 53-bit U, a
// function of b and fresh randomness only.
//
// Residual risk: the number of rejected proposals, hence the running time,
// depends on the data (about K/Σ_b exp(−c·(D_b − D_min)) proposals). Timing
// of DP samplers can leak (Jin, McMurtry, Rubinstein, Ohrimenko 2022, "Are
// We There Yet? Timing and Floating-Point Attacks on Differential Privacy
// Systems", IEEE S&P); the difference here is microseconds next to a backend
// query of milliseconds, but it is not closed.
type Quantile struct {
	epsilon      float64
	lower, upper float64
	bins         int
	maxRows      int
	width        float64
}

// Limits of the exact integer arithmetic (see the type's comment).
const (
	maxQuantileBins    = 1 << 20
	maxQuantileRows    = 1 << 27 // rows per unit: Δ·2^24 < 2^51
	maxQuantileCount   = 1 << 38 // rows in one histogram: 2^24·n < 2^62
	quantileRankBits   = 24      // p and T are multiples of 2^-24
	quantileExpCap     = 128     // X: exponents are capped ≥ X above the best
	maxQuantileTrim    = 1 << 36 // t beyond this is noise at any n < 2^38
	quantileMantissa   = 32      // bits of C in c = C/2^S
	minQuantileExpBits = -79     // c ≥ 2^-80: S ≤ 111, so 2^S fits in 128 bits
)

// NewQuantile returns the mechanism for one ε-DP quantile release over
// [lower, upper] divided into bins equal bins, when one privacy unit
// contributes at most maxRows rows to the histogram.
func NewQuantile(epsilon, lower, upper float64, bins, maxRows int) (*Quantile, error) {
	if err := checkEpsilon(epsilon); err != nil {
		return nil, err
	}
	if math.IsNaN(lower) || math.IsNaN(upper) || math.IsInf(lower, 0) || math.IsInf(upper, 0) || !(lower < upper) {
		return nil, fmt.Errorf("mechanism: quantile bounds must be finite with lower < upper, got [%v, %v]", lower, upper)
	}
	if math.IsInf(upper-lower, 0) {
		return nil, fmt.Errorf("mechanism: quantile bounds [%v, %v] are too far apart for float64", lower, upper)
	}
	if bins < 1 || bins > maxQuantileBins {
		return nil, fmt.Errorf("mechanism: quantile bins must be in [1, %d], got %d", maxQuantileBins, bins)
	}
	width := (upper - lower) / float64(bins)
	if maxRows < 1 || maxRows > maxQuantileRows {
		return nil, fmt.Errorf("mechanism: quantile rows per unit must be in [1, %d], got %d", maxQuantileRows, maxRows)
	}
	q := &Quantile{epsilon: epsilon, lower: lower, upper: upper, bins: bins, maxRows: maxRows, width: width}
	// The exponent per rank is smallest for p ∈ {0, 1} and largest for
	// p = ½; checking both now means that Release never fails on ε.
	for _, p := range []float64{0, 0.5} {
		if _, err := q.params(p); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// Bins returns the number of bins K.
func (q *Quantile) Bins() int { return q.bins }

// BinWidth returns w = (upper − lower)/K.
func (q *Quantile) BinWidth() float64 { return q.width }

// Epsilon returns the ε of one release.
func (q *Quantile) Epsilon() float64 { return q.epsilon }

// Bin returns the bin of a clamped value: ⌊(x − lower)/w⌋, with x ≤ lower in
// bin 0 and x ≥ upper in bin K−1. The backend's binning must be a function of
// the row alone (any such function keeps the privacy guarantee); this one is
// the reference the accuracy statements assume. NaN is in bin 0.
func (q *Quantile) Bin(x float64) int {
	if !(x > q.lower) {
		return 0
	}
	if x >= q.upper {
		return q.bins - 1
	}
	return min(int((x-q.lower)/q.width), q.bins-1)
}

// edge returns the lower edge of bin b (b = K gives upper).
func (q *Quantile) edge(b int) float64 {
	if b >= q.bins {
		return q.upper
	}
	return min(q.lower+float64(b)*q.width, q.upper)
}

// quantileParams are the exact integers of one release at a given p.
type quantileParams struct {
	p    int64   // p̂·2^24, p̂ = p rounded to a multiple of 2^-24
	trim int64   // T·2^24, T = t·(1 − 2p̂)
	c    uint64  // C: the exponent per unit of D is C/2^S
	s    uint    // S
	dcap int64   // D_cap
	rate float64 // C·2^24/2^S, the exponent per rank (exact)
}

const rankOne = 1 << quantileRankBits // one rank in units of D

func (q *Quantile) params(p float64) (quantileParams, error) {
	if !(p >= 0 && p <= 1) {
		return quantileParams{}, fmt.Errorf("mechanism: quantile p must be in [0, 1], got %v", p)
	}
	pp := int64(math.Round(p * rankOne))
	// Δ·2^24 = max(p̂, 1−p̂)·2^24·maxRows, exact in int64 and float64 (< 2^51).
	sens := max(pp, rankOne-pp) * int64(q.maxRows)
	// exponent per unit of D: ε/(2·2^24·Δ), rounded down to C/2^S with C < 2^32.
	// The float quotient has relative error ≤ 2^-53; taking one unit off the
	// floored 32-bit mantissa leaves C/2^S strictly below the exact value.
	x := q.epsilon / float64(2*sens)
	frac, exp := math.Frexp(x) // x = frac·2^exp, frac ∈ [½, 1)
	if exp > 0 || exp < minQuantileExpBits {
		return quantileParams{}, fmt.Errorf("mechanism: quantile epsilon %v is outside the supported range for %d rows per unit (epsilon/rows must be in [2^-55, 2^24))", q.epsilon, q.maxRows)
	}
	c := uint64(math.Floor(math.Ldexp(frac, quantileMantissa))) - 1
	s := uint(quantileMantissa - exp)
	rate := math.Ldexp(float64(c), quantileRankBits-int(s))
	// The trim t = (2Δ/ε)·ln K in ranks, with Δ/ε from the exact rate.
	var trim int64
	if q.bins > 1 {
		t := min(math.Log(float64(q.bins))/rate, maxQuantileTrim)
		trim = int64(math.Round(t * float64(rankOne-2*pp)))
	}
	// D_min ≤ 2^24·max(½, |T|) when n ≥ 1 (see RankError); D_cap leaves X
	// nats above that. Beyond 2^62 no cap is needed: D < 2^63 and C·D < 2^95.
	dcap := int64(math.MaxInt64)
	if f := math.Ldexp(quantileExpCap, int(s)) / float64(c); f < 1<<61 {
		dcap = int64(math.Ceil(f)) + 1 + rankOne/2 + abs64(trim)
	}
	return quantileParams{p: pp, trim: trim, c: c, s: s, dcap: dcap, rate: rate}, nil
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// distances returns D_b = min(2^24·d(b), D_cap) − min_b(…) for every bin, as
// unsigned integers, the exact (shifted) exponents in units of 1/c.
func (q *Quantile) distances(counts []int64, pr quantileParams) ([]uint64, error) {
	if len(counts) != q.bins {
		return nil, fmt.Errorf("mechanism: quantile histogram has %d bins, want %d", len(counts), q.bins)
	}
	var n int64
	for b, c := range counts {
		if c < 0 {
			return nil, fmt.Errorf("mechanism: quantile histogram bin %d has negative count %d", b, c)
		}
		if c > maxQuantileCount-1-n {
			return nil, errors.New("mechanism: quantile histogram holds 2^38 rows or more")
		}
		n += c
	}
	// H = 2^24·h = 2^24 + 2^24·T + p̂·2^24·(n − 1); |terms| < 2^62.
	h := rankOne + pr.trim + pr.p*(n-1)
	d := make([]uint64, len(counts))
	dist := make([]int64, len(counts))
	minDist := int64(math.MaxInt64)
	var below int64 // L_b
	for b, c := range counts {
		v := max(0, (below+1)*rankOne-h, h-(below+c)*rankOne)
		v = min(v, pr.dcap)
		dist[b] = v
		minDist = min(minDist, v)
		below += c
	}
	for b, v := range dist {
		d[b] = uint64(v - minDist)
	}
	return d, nil
}

// Release returns the ε-DP p-quantile (p = 0 for MIN, 1 for MAX, ½ for the
// median) of the values counted in counts (counts[b] is the number of rows in
// bin b after clamping and contribution bounding). With an empty histogram the
// result is uniform on [lower, upper].
func (q *Quantile) Release(counts []int64, p float64) (float64, error) {
	b, err := q.releaseBin(counts, p)
	if err != nil {
		return 0, err
	}
	u := withSource(func(src *bitSource) float64 { return float64(src.uint64()>>11) * 0x1p-53 })
	// A point of bin b from b and U alone; clamping is post-processing.
	y := q.lower + (float64(b)+u)*q.width
	return min(max(y, q.edge(b), q.lower), q.edge(b+1), q.upper), nil
}

// releaseBin is the exponential mechanism's choice of a bin.
func (q *Quantile) releaseBin(counts []int64, p float64) (int, error) {
	pr, err := q.params(p)
	if err != nil {
		return 0, err
	}
	d, err := q.distances(counts, pr)
	if err != nil {
		return 0, err
	}
	return withSource(func(src *bitSource) int { return pr.sample(src, d) }), nil
}

// sample returns bin b with probability ∝ exp(−C·d[b]/2^S), exactly: propose
// b uniformly, accept with probability exp(−C·d[b]/2^S) (Canonne et al. 2020,
// Algorithm 1, via bernoulliExpNeg). C·d[b] < 2^128 since C < 2^32 and
// d[b] < 2^63; 2^S < 2^112.
func (pr quantileParams) sample(src *bitSource, d []uint64) int {
	den := u128{lo: 1 << pr.s}
	if pr.s >= 64 {
		den = u128{hi: 1 << (pr.s - 64)}
	}
	k := uint64(len(d))
	for {
		b := src.uniform(k)
		if src.bernoulliExpNeg(mul64x64(pr.c, d[b]), den) {
			return int(b)
		}
	}
}

// RankError returns r such that, with probability at least confidence, the
// released p-quantile's bin B satisfies
//
//	#{values below B} ≤ p̂(n−1) + r  and  #{values above B} ≤ (1−p̂)(n−1) + r,
//
// for any histogram with n ≥ 1 rows, p̂ being p rounded to a multiple of
// 2^-24. Equivalently, the target index h* = 1 + p̂(n−1) of PERCENTILE_CONT
// is within r of the indices L_B+1 … U_B that B holds. r does not depend on
// the data and may be shown to anyone. NaN when confidence or p is out of
// range.
//
// Derivation (the utility theorem of the exponential mechanism, McSherry and
// Talwar 2007, Theorem 6; Dwork and Roth 2014, Theorem 3.11, in the form
// P[b] ≤ exp(−rate·(d(b) − d_min))): at most K−1 bins are not optimal, so
//
//	P[d(B) ≥ d_min + s] ≤ (K−1)·e^(−rate·s) = α  for  s = ln((K−1)/α)/rate.
//
// The optimum d_min ≤ max(½, |T|): when h ∈ [1, n] the bins holding ⌊h⌋ and
// ⌈h⌉ are within ½; when h > n (or < 1), the last (first) non-empty bin is
// h − n ≤ T (1 − h ≤ −T) away. The distance to h* is at most |T| more, so
// r = ½ + s + 2|T|.
func (q *Quantile) RankError(p, confidence float64) float64 {
	pr, err := q.params(p)
	if err != nil || !(confidence > 0 && confidence < 1) {
		return math.NaN()
	}
	trim := math.Abs(float64(pr.trim)) / rankOne
	if q.bins == 1 {
		return 0.5 + 2*trim
	}
	// α ≥ 2^-53 for a float64 confidence < 1 and K ≤ 2^20, so the nats are
	// at most 51, below the cap X = 128: no bin within s of the optimum is
	// capped, and the bound holds for the capped weights as stated.
	nats := math.Log(float64(q.bins-1)) - math.Log1p(-confidence)
	return 0.5 + nats/pr.rate + 2*trim
}

// ValueInterval turns a rank error into values: if the released value's bin
// B satisfies RankError's event with radius rankError, the PERCENTILE_CONT
// (at p̂) of the clamped values lies in the returned interval, computed from
// counts as [lower edge of the bin holding index ⌊L_B + 1 − r⌋, upper edge of
// the bin holding index ⌈U_B + r⌉] (both clipped to 1 … n), because the
// quantile lies between x₍⌊h*⌋₎ and x₍⌈h*⌉₎ and L_B + 1 − r ≤ h* ≤ U_B + r.
//
// The interval is a function of counts. With the true histogram it is exact
// but NOT differentially private: use it for evaluation, or pass a DP
// histogram and add its worst cumulative count error (with its own
// confidence, by a union bound) to rankError. An empty histogram yields
// [lower, upper].
func (q *Quantile) ValueInterval(counts []int64, p, released, rankError float64) (Interval, error) {
	if !(rankError >= 0) {
		return Interval{}, errors.New("mechanism: quantile rank error must be ≥ 0")
	}
	pr, err := q.params(p)
	if err != nil {
		return Interval{}, err
	}
	if _, err := q.distances(counts, pr); err != nil {
		return Interval{}, err
	}
	var n int64
	for _, c := range counts {
		n += c
	}
	if n == 0 || rankError >= float64(n) {
		return Interval{q.lower, q.upper}, nil
	}
	b := q.Bin(released)
	var below int64
	for _, c := range counts[:b] {
		below += c
	}
	lo := min(n, max(1, int64(math.Floor(float64(below)+1-rankError))))
	hi := min(n, max(1, int64(math.Ceil(float64(below+counts[b])+rankError))))
	lo, hi = min(lo, hi), max(lo, hi)
	// binOf returns the bin holding the i-th smallest value (1-based).
	binOf := func(i int64) int {
		var seen int64
		for j, c := range counts {
			if seen += c; seen >= i {
				return j
			}
		}
		return q.bins - 1
	}
	return Interval{Low: q.edge(binOf(lo)), High: q.edge(binOf(hi) + 1)}, nil
}
