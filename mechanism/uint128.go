package mechanism

import "math/bits"

// u128 is an unsigned 128-bit integer. The exact Bernoulli(exp(-x)) sampler
// of the discrete Gaussian needs x = num/den with num and den up to about
// 2^110 (see gaussian.go); math/big would be exact too but allocates on
// every trial, so the few operations needed are written out with math/bits.
type u128 struct {
	hi, lo uint64
}

func u128From(x uint64) u128 { return u128{lo: x} }

// mul64x64 returns the full 128-bit product a·b.
func mul64x64(a, b uint64) u128 {
	hi, lo := bits.Mul64(a, b)
	return u128{hi: hi, lo: lo}
}

// mul64 returns x·b and whether the product overflowed 128 bits.
func (x u128) mul64(b uint64) (u128, bool) {
	hiHi, hiLo := bits.Mul64(x.hi, b)
	loHi, loLo := bits.Mul64(x.lo, b)
	hi, carry := bits.Add64(hiLo, loHi, 0)
	return u128{hi: hi, lo: loLo}, hiHi != 0 || carry != 0
}

// less reports x < y.
func (x u128) less(y u128) bool {
	if x.hi != y.hi {
		return x.hi < y.hi
	}
	return x.lo < y.lo
}

// sub returns x − y; the caller guarantees y ≤ x.
func (x u128) sub(y u128) u128 {
	lo, borrow := bits.Sub64(x.lo, y.lo, 0)
	hi, _ := bits.Sub64(x.hi, y.hi, borrow)
	return u128{hi: hi, lo: lo}
}

func (x u128) isZero() bool { return x.hi == 0 && x.lo == 0 }

// bitLen is the number of bits needed to represent x (0 for x = 0).
func (x u128) bitLen() int {
	if x.hi != 0 {
		return 64 + bits.Len64(x.hi)
	}
	return bits.Len64(x.lo)
}
