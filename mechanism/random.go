package mechanism

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"
)

// randomBufferSize is how many crypto/rand bytes one source reads at a time.
// One sample consumes roughly 100 bytes; reading 4 KiB per system call keeps
// the cost of crypto/rand well below a microsecond per sample.
const randomBufferSize = 4096

// bitSource is a buffered reader over crypto/rand. It is not safe for
// concurrent use; sources lends each caller one exclusively (sync.Pool keeps
// one per P, so concurrent samplers neither share bytes nor contend on a lock).
type bitSource struct {
	buf   [randomBufferSize]byte
	off   int
	cache uint64 // unused random bits for bit()
	nbits int
}

var sources = sync.Pool{New: func() any { return &bitSource{off: randomBufferSize} }}

// withSource runs f with a source that no other goroutine uses meanwhile.
func withSource[T any](f func(*bitSource) T) T {
	src := sources.Get().(*bitSource)
	defer sources.Put(src)
	return f(src)
}

func (s *bitSource) uint64() uint64 {
	if s.off+8 > len(s.buf) {
		// Since Go 1.24 crypto/rand.Read never returns an error (it aborts
		// the program if the kernel's generator fails); the check guards
		// against a silent change of that contract, never against bad luck.
		if _, err := rand.Read(s.buf[:]); err != nil {
			panic(fmt.Sprintf("mechanism: crypto/rand failed, refusing to add noise: %v", err))
		}
		s.off = 0
	}
	v := binary.LittleEndian.Uint64(s.buf[s.off:])
	s.off += 8
	return v
}

// bit returns one fair random bit.
func (s *bitSource) bit() bool {
	if s.nbits == 0 {
		s.cache, s.nbits = s.uint64(), 64
	}
	b := s.cache&1 == 1
	s.cache >>= 1
	s.nbits--
	return b
}

// uniform returns an exactly uniform integer in [0, n), n > 0, by Lemire's
// multiply-and-reject method (Lemire 2019, "Fast Random Integer Generation in
// an Interval", ACM TOMACS 29(1)): the rejection step removes the modulo bias,
// so the result is exact, not approximately uniform.
func (s *bitSource) uniform(n uint64) uint64 {
	hi, lo := bits.Mul64(s.uint64(), n)
	if lo < n {
		threshold := -n % n // = 2^64 mod n
		for lo < threshold {
			hi, lo = bits.Mul64(s.uint64(), n)
		}
	}
	return hi
}

// uniform128 returns an exactly uniform integer in [0, n), n > 0, by drawing
// bitLen(n) random bits and rejecting values ≥ n (fewer than 2 draws expected).
func (s *bitSource) uniform128(n u128) u128 {
	if n.hi == 0 {
		return u128From(s.uniform(n.lo))
	}
	mask := ^uint64(0) >> (128 - n.bitLen())
	for {
		v := u128{hi: s.uint64() & mask, lo: s.uint64()}
		if v.less(n) {
			return v
		}
	}
}

// bernoulliRatio returns true with probability num/(den·k), for num ≤ den and
// k ≥ 1, exactly: uniform(k)·den + uniform(den) is uniform on [0, den·k) and is
// < num exactly when the first part is 0 and the second < num. Splitting it
// avoids ever forming the product den·k.
func (s *bitSource) bernoulliRatio(num, den u128, k uint64) bool {
	if k > 1 && s.uniform(k) != 0 {
		return false
	}
	return s.uniform128(den).less(num)
}

// bernoulliExpNegFraction returns true with probability exp(−γ) for the
// rational γ = num/den ∈ [0, 1]. Canonne, Kamath, Steinke 2020 ("The Discrete
// Gaussian for Differential Privacy", NeurIPS), Algorithm 1, case γ ≤ 1: draw
// A_k ~ Bernoulli(γ/k) for k = 1, 2, ... until the first A_k = 0 at k = K;
// then P[K > k] = γ^k/k!, so P[K odd] = Σ_k (−γ)^k/k! = exp(−γ).
func (s *bitSource) bernoulliExpNegFraction(num, den u128) bool {
	if num.isZero() {
		return true
	}
	k := uint64(1)
	for s.bernoulliRatio(num, den, k) {
		k++
	}
	return k%2 == 1
}

// bernoulliExpMinusOne returns true with probability exp(−1): Algorithm 1 of
// Canonne et al. with γ = 1, where A_1 = 1 always and A_k ~ Bernoulli(1/k).
func (s *bitSource) bernoulliExpMinusOne() bool {
	k := uint64(2)
	for s.uniform(k) == 0 {
		k++
	}
	return k%2 == 1
}

// bernoulliExpNeg returns true with probability exp(−num/den) for any
// rational num/den ≥ 0 (den > 0). Canonne et al. 2020, Algorithm 1, case γ > 1:
// exp(−γ) = exp(−1)^⌊γ⌋ · exp(−(γ − ⌊γ⌋)). Subtracting den from num one unit at
// a time, stopping at the first failed exp(−1) trial, computes ⌊γ⌋ lazily: the
// loop runs 1/(1 − e⁻¹) ≈ 1.6 times on average however large γ is.
func (s *bitSource) bernoulliExpNeg(num, den u128) bool {
	for !num.less(den) {
		if !s.bernoulliExpMinusOne() {
			return false
		}
		num = num.sub(den)
	}
	return s.bernoulliExpNegFraction(num, den)
}

// maxLaplaceMagnitude bounds |sample| so that grid arithmetic never overflows.
// With t ≤ 2^50+1 (see newDiscreteLaplace) a sample this large needs X ≥ 2^62,
// that is more than 2^11 − 1 consecutive exp(−1) successes: probability below
// e^(−2000).
const maxLaplaceMagnitude = 1 << 62

// discreteLaplace is the two-sided geometric distribution on the integers,
// P[Y = y] ∝ exp(−|y|·s/t), i.e. scale t/s, with t, s ≥ 1 integers.
type discreteLaplace struct {
	t, s uint64
}

// sample draws from the discrete Laplace distribution exactly, by Canonne,
// Kamath, Steinke 2020, Algorithm 2: X = U + t·V with U uniform on [0, t)
// accepted with probability exp(−U/t) and V geometric with P[V ≥ v] = e^(−v)
// is geometric with P[X ≥ x] = e^(−x/t); ⌊X/s⌋ is then geometric with ratio
// e^(−s/t); a random sign, rejecting "−0", makes it two-sided.
func (d discreteLaplace) sample(src *bitSource) int64 {
	for {
		u := src.uniform(d.t)
		if !src.bernoulliExpNegFraction(u128From(u), u128From(d.t)) {
			continue
		}
		var v uint64
		for src.bernoulliExpMinusOne() {
			v++
		}
		hi, lo := bits.Mul64(d.t, v)
		x, carry := bits.Add64(lo, u, 0)
		if hi != 0 || carry != 0 || x/d.s > maxLaplaceMagnitude {
			// Conditioning on |Y| ≤ 2^62 changes the distribution by less
			// than e^(−2000) in total variation (see maxLaplaceMagnitude).
			continue
		}
		y := int64(x / d.s)
		if src.bit() {
			if y == 0 {
				continue
			}
			return -y
		}
		return y
	}
}

// discreteGaussian is the discrete Gaussian N_Z(0, σ²) on the integers,
// P[Y = y] ∝ exp(−y²/(2σ²)), with σ² = n/d rational (d a power of two).
type discreteGaussian struct {
	n, d    uint64
	laplace discreteLaplace // scale t = ⌊σ⌋ + 1, the proposal of Algorithm 3
	dt      uint64          // d·t
	den     u128            // 2·n·d·t², denominator of the acceptance exponent
	yMax    uint64          // largest |Y| with |Y|·d·t < 2^63
}

// sample draws from N_Z(0, σ²) exactly, by Canonne, Kamath, Steinke 2020,
// Algorithm 3: propose Y from the discrete Laplace with scale t = ⌊σ⌋+1 and
// accept with probability exp(−(|Y| − σ²/t)²/(2σ²)). With σ² = n/d the exponent
// is the rational (|Y|·d·t − n)² / (2·n·d·t²), evaluated in exact integers.
func (g discreteGaussian) sample(src *bitSource) int64 {
	for {
		y := g.laplace.sample(src)
		abs := uint64(y)
		if y < 0 {
			abs = uint64(-y)
		}
		if abs > g.yMax {
			// Such a proposal would be accepted with probability below
			// e^(−2^15) (newDiscreteGaussian keeps yMax ≥ 2^12·σ² and
			// ≥ 2^10·t), so rejecting it outright is a negligible change.
			continue
		}
		a := abs * g.dt
		var diff uint64
		if a >= g.n {
			diff = a - g.n
		} else {
			diff = g.n - a
		}
		if src.bernoulliExpNeg(mul64x64(diff, diff), g.den) {
			return y
		}
	}
}
