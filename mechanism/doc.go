// Package mechanism adds differentially private noise to the aggregates that
// dpproxy releases, and decides which GROUP BY keys may be released at all.
//
// All randomness comes from crypto/rand; math/rand is never used. Noise is
// floating-point safe in the sense of Mironov (2012, "On significance of the
// least significant bits for differential privacy", CCS): instead of adding a
// continuous sample to a float64, which leaks the true value through the low
// bits of the sum, every mechanism
//
//  1. picks a power-of-two granularity γ (the grid, see grid.go),
//  2. rounds the true value to the nearest multiple of γ,
//  3. adds an exactly sampled integer multiple of γ, and
//  4. returns a number that lies on the grid (x/γ is an integer).
//
// This follows the design of Google's differential-privacy library
// (go/noise/laplace_noise.go and the "Secure Noise Generation" note in
// common_docs). Unlike that library, both mechanisms here use the exact
// samplers of Canonne, Kamath and Steinke (2020, "The Discrete Gaussian for
// Differential Privacy", NeurIPS): the discrete Laplace (two-sided geometric)
// distribution for Laplace noise and the discrete Gaussian for Gaussian noise,
// built only from uniform integers and exact Bernoulli(exp(-x)) trials on
// rational x, so that no floating-point approximation touches a probability.
//
// Files: random.go (crypto/rand source, exact Bernoulli, discrete Laplace and
// Gaussian samplers), uint128.go (the exact integer arithmetic they need),
// grid.go (granularity and rounding), laplace.go, gaussian.go, partition.go
// (partition selection by Laplace thresholding), quantile.go (MIN, MAX,
// MEDIAN and PERCENTILE_CONT by an exactly sampled exponential mechanism over
// a histogram), interval.go (sound confidence intervals for counts, AVG and
// VAR/STDDEV) and mechanism.go (the Mechanism interface and argument checks).
package mechanism
