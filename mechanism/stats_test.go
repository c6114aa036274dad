package mechanism

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// Statistical tests cannot fix a seed (crypto/rand), so each uses a
// significance level small enough that a false failure is negligible, and
// each is paired with a check that the same test rejects a wrong input.

// testAlpha is the significance level of every statistical assertion.
const testAlpha = 1e-7

// newTestSource returns a private source for drawing many samples.
func newTestSource() *bitSource { return &bitSource{off: randomBufferSize} }

// clopperPearson returns the two-sided exact binomial confidence interval of
// level 1−alpha for k successes in n trials.
func clopperPearson(k, n int, alpha float64) (lo, hi float64) {
	if k > 0 {
		lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(alpha / 2)
	}
	hi = 1
	if k < n {
		hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - alpha/2)
	}
	return lo, hi
}

// chiSquareGOF bins integer samples and returns the p-value of Pearson's
// chi-square test against pmf. Bins are runs of width consecutive integers on
// [−radius, radius] plus the two tails; bins expecting fewer than 20 samples
// are merged into their outer neighbour so the chi-square approximation holds.
func chiSquareGOF(t *testing.T, samples []int64, pmf func(int64) float64, radius, width int64) float64 {
	t.Helper()
	n := float64(len(samples))
	var edges []int64 // bin i is [edges[i], edges[i+1])
	for lo := -radius; lo <= radius; lo += width {
		edges = append(edges, lo)
	}
	edges = append(edges, radius+1)
	probs := make([]float64, len(edges)+1) // [tail−, bins..., tail+]
	var inner float64
	for i := 0; i+1 < len(edges); i++ {
		for y := edges[i]; y < edges[i+1]; y++ {
			probs[i+1] += pmf(y)
		}
		inner += probs[i+1]
	}
	// Tails by symmetry of the pmfs tested here.
	probs[0] = (1 - inner) / 2
	probs[len(probs)-1] = (1 - inner) / 2
	counts := make([]float64, len(probs))
	for _, y := range samples {
		switch {
		case y < -radius:
			counts[0]++
		case y > radius:
			counts[len(counts)-1]++
		default:
			i := (y + radius) / width
			counts[i+1]++
		}
	}
	// Merge small bins, outermost first, from both ends toward the middle.
	type bin struct{ p, c float64 }
	var merged []bin
	acc := bin{}
	mid := len(probs) / 2
	for i := 0; i < mid; i++ {
		acc.p += probs[i]
		acc.c += counts[i]
		if acc.p*n >= 20 {
			merged = append(merged, acc)
			acc = bin{}
		}
	}
	right := bin{}
	var rightBins []bin
	for i := len(probs) - 1; i >= mid; i-- {
		right.p += probs[i]
		right.c += counts[i]
		if right.p*n >= 20 {
			rightBins = append(rightBins, right)
			right = bin{}
		}
	}
	// Fold leftovers into the central bins.
	if len(rightBins) == 0 {
		t.Fatal("chiSquareGOF: too few samples for any bin")
	}
	rightBins[len(rightBins)-1].p += right.p + acc.p
	rightBins[len(rightBins)-1].c += right.c + acc.c
	for i := len(rightBins) - 1; i >= 0; i-- {
		merged = append(merged, rightBins[i])
	}
	var stat float64
	for _, b := range merged {
		e := b.p * n
		stat += (b.c - e) * (b.c - e) / e
	}
	df := float64(len(merged) - 1)
	return distuv.ChiSquared{K: df}.Survival(stat)
}

func laplacePMF(scale float64) func(int64) float64 {
	p := math.Exp(-1 / scale)
	c := (1 - p) / (1 + p)
	return func(y int64) float64 { return c * math.Pow(p, math.Abs(float64(y))) }
}

func gaussianPMF(sigma float64) func(int64) float64 {
	var z float64
	r := int64(math.Ceil(40*sigma)) + 1
	for y := -r; y <= r; y++ {
		z += math.Exp(-float64(y*y) / (2 * sigma * sigma))
	}
	return func(y int64) float64 { return math.Exp(-float64(y)*float64(y)/(2*sigma*sigma)) / z }
}
