package train

import (
	"fmt"
	"strconv"
)

// Model is a trained logistic regression model. Everything in it is
// released: it is a function of the noisy weights and of public parameters.
type Model struct {
	// Inputs are the features the model reads, in order, with their public
	// bounds and categories: enough to apply it.
	Inputs []Feature
	// Features names each weight: "age", "sex=Male", ..., "(intercept)" last.
	// For a kernel model they are the random features "rff_cos1", ...
	Features []string
	// Weights score a row on the ORIGINAL scale of its values:
	// P(label) = 1/(1+exp(−(intercept + Σ weight·value))), where a numeric
	// value is first clamped to its public bounds (NULL: their midpoint) and
	// a categorical feature contributes the weight of "name=value" (nothing
	// for NULL or a value outside its public categories). Kernel models have
	// no such form: their Weights equal RawWeights, applied by Predict.
	Weights []float64
	// RawWeights act on the encoded vector x (see Encoder). They are
	// multiples of Grid, released snapped to it.
	RawWeights []float64
	// Grid is the power of two the raw weights are rounded to (see
	// gridFor); 0 for a model trained without privacy.
	Grid    float64
	Epsilon float64
	Delta   float64
	Lambda  float64 // the λ used (the one chosen, with AutoLambda)
	Method  string
	// Rows is N, the row count the fit was normalised by: a DP count (or
	// Options.PublicRows), never the true number of rows. With AutoLambda
	// it is the chosen model's part of the rows, N/(candidates + 1).
	Rows int64
	RFF  *RFFParams // nil for a linear model
	// Sample describes how the rows were sampled under the memory cap
	// (nil when Fit saw every row it was given).
	Sample *SampleInfo `json:",omitempty"`
}

// SampleInfo is the public record of a sampled fit (see sample.go). Rows of
// the training set were kept independently with probability Rate, at most
// Cap of them; the probability that the cap dropped any kept row is below
// DropBound for every database, which is why Delta is 2⁻⁴⁰ rather than 0.
type SampleInfo struct {
	Rate       float64
	Cap        int64
	DropBound  float64
	FitEpsilon float64 // ε₀ the weights were calibrated at (amplified by the sampling)
}

// setWeights fills Features and Weights from RawWeights.
func (m *Model) setWeights(enc *Encoder) {
	if m.RFF != nil {
		k := (len(m.RawWeights) - 1) / 2
		m.Features = make([]string, 0, len(m.RawWeights))
		for j := range k {
			m.Features = append(m.Features, "rff_cos"+strconv.Itoa(j+1))
		}
		for j := range k {
			m.Features = append(m.Features, "rff_sin"+strconv.Itoa(j+1))
		}
		m.Features = append(m.Features, InterceptName)
		m.Weights = append([]float64(nil), m.RawWeights...)
		return
	}
	m.Features = enc.FeatureNames()
	m.Weights = originalWeights(enc, m.RawWeights)
}

// originalWeights rewrites weights on the encoded vector as weights on the
// original values. With x = s·x̃ (s = 1/K) and, for a numeric feature,
// x̃ = (v − mid)/half, the score is
//
//	wᵀx = Σ_num (w·s/half)·v + Σ_cat w·s·[value] + (w_bias·s − Σ_num w·s·mid/half),
//
// exactly, for v within the bounds (the encoder clamps first).
func originalWeights(enc *Encoder, raw []float64) []float64 {
	out := make([]float64, len(raw))
	bias := enc.dim - 1
	out[bias] = raw[bias] * enc.scale
	for j := range raw[:bias] {
		out[j] = raw[j] * enc.scale
	}
	for _, fi := range enc.numeric {
		f := enc.features[fi]
		mid, half := f.Lower+(f.Upper-f.Lower)/2, (f.Upper-f.Lower)/2
		c := enc.offset[fi]
		out[c] = raw[c] * enc.scale / half
		out[bias] -= raw[c] * enc.scale * mid / half
	}
	return out
}

// Predictor applies a model to rows.
type Predictor struct {
	m   *Model
	enc *Encoder
	rff *rffMap
	num []float32
	cat []uint16
	x   []float64
	z   []float32
}

// Predictor returns a scorer for the model; it is not safe for concurrent use.
func (m *Model) Predictor() (*Predictor, error) {
	enc, err := NewEncoder(m.Inputs)
	if err != nil {
		return nil, fmt.Errorf("train: the model's inputs: %w", err)
	}
	p := &Predictor{m: m, enc: enc, num: make([]float32, len(enc.numeric)), cat: make([]uint16, len(enc.groups)), x: make([]float64, enc.dim)}
	want := enc.dim
	if m.RFF != nil {
		if p.rff, err = newRFFMap(enc, *m.RFF); err != nil {
			return nil, err
		}
		want = p.rff.dim()
		p.z = make([]float32, want)
	}
	if len(m.RawWeights) != want {
		return nil, fmt.Errorf("train: the model has %d weights for %d features", len(m.RawWeights), want)
	}
	return p, nil
}

// Predict returns the probability that the label is true for one row of
// values in the order of m.Inputs.
func (p *Predictor) Predict(values []any) (float64, error) {
	if err := p.enc.encode(values, p.num, p.cat); err != nil {
		return 0, err
	}
	var s float64
	if p.rff != nil {
		p.rff.apply(p.num, p.cat, p.z)
		for j, v := range p.z {
			s += p.m.RawWeights[j] * float64(v)
		}
	} else {
		p.enc.dense(p.num, p.cat, p.x)
		for j, v := range p.x {
			s += p.m.RawWeights[j] * v
		}
	}
	return sigmoid(s), nil
}

// Predict returns the probability that the label is true for one row. It
// builds a Predictor each call; score many rows with Predictor.
func (m *Model) Predict(values []any) (float64, error) {
	p, err := m.Predictor()
	if err != nil {
		return 0, err
	}
	return p.Predict(values)
}
