package train

import "math"

// objectiveNoise draws the noise vector b of objective perturbation for
// privacy parameter ePrime (the ε' of calibrateObjective): density
// ∝ exp(−(ε'/Δ)‖b‖) in a norm ‖·‖ in which every row's loss gradient
// ℓ'·y·x has norm at most Δ.
//
// Chaudhuri et al. (2011) use the ℓ2 norm (Δ = 1, since ‖x‖₂ ≤ 1 and
// |ℓ'| ≤ 1). Their proof of Theorem 9 uses the norm only in one step: adding
// a row z moves b by ∇ℓ_z(w*), so the density ratio ν(b)/ν(b′) is at most
// exp((ε'/Δ)‖∇ℓ_z‖) ≤ exp(ε'); the Jacobian step depends on ℓ” and ‖x‖₂
// alone. Any norm with that bound therefore gives the same guarantee (this is
// the K-norm mechanism of Hardt, Talwar, "On the geometry of differential
// privacy", STOC 2010, applied to the objective's noise). The linear design's
// rows are sparse, ‖x‖₁ ≤ K (see linearDesign.l1Bound), so the ℓ1 norm with
// Δ = K makes b a vector of independent Laplace(K/ε') coordinates.
//
// Which norm is better is decided from public quantities only. What moves a
// prediction is the noise along a row, bᵀu for a direction u: for the ℓ2
// noise E[(bᵀu)²] = E‖b‖²/dim = (dim + 1)/ε'² (‖b‖ ~ Gamma(dim, ε'), the
// direction uniform); for the ℓ1 noise it is 2K²/ε'² (Laplace variance 2s²,
// ‖u‖₂ = 1). On Adult (dim 108, K² = 14) the ℓ1 noise is √(109/28) ≈ 2 times
// smaller along every row, as much as doubling ε.
func objectiveNoise(des design, ePrime float64) []float64 {
	if useL1(des) {
		return sampleLaplace(des.dim(), ePrime/des.l1Bound())
	}
	return sampleBall(des.dim(), ePrime)
}

func useL1(des design) bool {
	k := des.l1Bound()
	return k > 0 && 2*k*k < float64(des.dim()+1)
}

// noiseNorm is the typical ℓ2 norm of the objective's noise at ε': dim/ε'
// for the ℓ2 ball (‖b‖ ~ Gamma(dim, ε'), mean dim/ε'), and the root mean
// square √(2·dim)·K/ε' for independent Laplace(K/ε') coordinates.
func noiseNorm(des design, ePrime float64) float64 {
	if useL1(des) {
		return math.Sqrt(2*float64(des.dim())) * des.l1Bound() / ePrime
	}
	return float64(des.dim()) / ePrime
}

// noiseAlongRow is ε'²·E[(bᵀu)²] for a unit vector u, the objective noise's
// variance along a row at ε' = 1 (see objectiveNoise).
func noiseAlongRow(des design) float64 {
	if useL1(des) {
		k := des.l1Bound()
		return 2 * k * k
	}
	return float64(des.dim() + 1)
}

// gridFor returns Λ, the power-of-two grid the released weights are snapped
// to when the last noise added to them has density ∝ exp(−rate·‖v‖₂): the
// smallest power of two at least the noise's scale 1/rate, the choice of
// Mironov's snapping mechanism ("On significance of the least significant
// bits for differential privacy", CCS 2012, Section 5.2: Λ the smallest power
// of two ≥ the Laplace scale). It depends on public quantities only (ε, λ, N,
// γ), so snapping is post-processing. The rounding moves each weight by at
// most Λ/2, against a noise of about √dim/rate per coordinate.
func gridFor(rate float64) float64 {
	if !(rate > 0) || math.IsInf(rate, 1) {
		return 0
	}
	_, e := math.Frexp(1 / rate) // 1/rate = f·2^e with f in [½, 1)
	g := math.Ldexp(1, e)
	if g/2 >= 1/rate { // 1/rate is a power of two itself
		g /= 2
	}
	return g
}

// snap rounds every weight to the nearest multiple of grid (0: no grid).
// Rounding the released floating-point weights destroys the low-order bits
// through which Mironov's (2012) attack reads the unnoised value; multiples of
// a power of two are exact in float64 at these magnitudes.
func snap(w []float64, grid float64) {
	if grid == 0 {
		return
	}
	for j, v := range w {
		w[j] = math.Round(v/grid) * grid
	}
}
