package train

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	mrand "math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// cryptoSource is a math/rand/v2 Source (the interface gonum's distuv takes
// as Src) that reads crypto/rand. It keeps no state, so it is safe for
// concurrent use and no seed can be recovered from released values.
type cryptoSource struct{}

func (cryptoSource) Uint64() uint64 {
	var b [8]byte
	// Since Go 1.24 crypto/rand.Read never returns an error: it aborts the
	// program if the kernel's generator fails.
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// secureRand draws from crypto/rand through math/rand/v2's conversions.
var secureRand = mrand.New(cryptoSource{})

// sampleBall returns b ∈ ℝ^dim with density ∝ exp(−rate·‖b‖), the noise of
// Chaudhuri et al. (2011), Algorithms 1 and 2: in polar coordinates the
// density of the norm r is ∝ r^{dim−1} e^{−rate·r}, i.e. Gamma(shape dim,
// rate), and the direction is uniform on the sphere, drawn as a normalised
// standard normal vector (Muller 1959). gonum's distuv.Gamma takes the rate β,
// the reciprocal of the scale.
func sampleBall(dim int, rate float64) []float64 {
	r := distuv.Gamma{Alpha: float64(dim), Beta: rate, Src: cryptoSource{}}.Rand()
	b := make([]float64, dim)
	for {
		var norm float64
		for j := range b {
			b[j] = secureRand.NormFloat64()
			norm += b[j] * b[j]
		}
		if norm > 0 {
			norm = math.Sqrt(norm)
			for j := range b {
				b[j] *= r / norm
			}
			return b
		}
	}
}

// sampleLaplace returns b ∈ ℝ^dim with density ∝ exp(−rate·‖b‖₁): independent
// Laplace coordinates of scale 1/rate, each an exponential variable of rate
// `rate` with a uniform sign (the density factorises over coordinates).
func sampleLaplace(dim int, rate float64) []float64 {
	b := make([]float64, dim)
	for j := range b {
		b[j] = secureRand.ExpFloat64() / rate
		if secureRand.Uint64()&1 == 1 {
			b[j] = -b[j]
		}
	}
	return b
}

// exponentialMechanism returns index i with probability ∝ exp(−ε·z_i/2): the
// exponential mechanism (McSherry, Talwar 2007) on the utility −z_i of
// sensitivity 1, ε-differentially private; the choice step of Chaudhuri et al.
// (2011), Algorithm 4.
func exponentialMechanism(z []int, epsilon float64) int {
	if math.IsInf(epsilon, 1) {
		best := 0
		for i, v := range z {
			if v < z[best] {
				best = i
			}
		}
		return best
	}
	minZ := z[0]
	for _, v := range z {
		minZ = min(minZ, v)
	}
	// Shift by the minimum so the largest weight is 1 and none overflows.
	w := make([]float64, len(z))
	var total float64
	for i, v := range z {
		w[i] = math.Exp(-epsilon * float64(v-minZ) / 2)
		total += w[i]
	}
	u := secureRand.Float64() * total
	for i, wi := range w {
		if u < wi {
			return i
		}
		u -= wi
	}
	return len(z) - 1
}

// randomParts assigns each of n rows independently and uniformly to one of k
// parts. The assignment does not look at the rows, so a row added or removed
// changes only the part it falls in (Chaudhuri et al. 2011, Algorithm 4's
// split into disjoint portions).
func randomParts(n, k int) [][]int32 {
	parts := make([][]int32, k)
	for i := range n {
		p := secureRand.IntN(k)
		parts[p] = append(parts[p], int32(i))
	}
	return parts
}

// seed32 returns 32 bytes from crypto/rand.
func seed32() [32]byte {
	var s [32]byte
	_, _ = rand.Read(s[:])
	return s
}

func checkPositive(name string, v float64) error {
	if !(v > 0) || math.IsNaN(v) {
		return fmt.Errorf("train: %s must be positive, not %v", name, v)
	}
	return nil
}
