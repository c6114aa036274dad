package train

import (
	"fmt"
	"math"
	mrand "math/rand/v2"
)

// RFFOptions asks for a nonlinear model with the RBF kernel
// k(x, x') = exp(−Gamma·‖x − x'‖²), approximated by random Fourier features
// (Rahimi, Recht 2007), as in Chaudhuri et al. (2011), Algorithm 3. x is the
// encoded row before the 1/K scaling: numeric features in [−1, 1], one-hot
// columns 0 or 1.
type RFFOptions struct {
	Components int     // random features; rounded up to an even number
	Gamma      float64 // kernel width
}

// RFFParams is the public part of a kernel model: the random features are
// drawn from Seed, independently of the data, so releasing them costs no
// privacy, and anyone holding the model can recompute them.
type RFFParams struct {
	Components int
	Gamma      float64
	Seed       [32]byte
}

// rffMap computes the features of a linear encoding.
type rffMap struct {
	enc   *Encoder
	freq  int       // m frequency vectors
	in    int       // inputs: the encoder's columns without the bias
	omega []float64 // m × in, ω_j ~ N(0, 2γI), the Fourier transform of the RBF kernel
	scale float64
}

func newRFFMap(enc *Encoder, p RFFParams) (*rffMap, error) {
	if p.Components < 1 || p.Components > 1<<16 {
		return nil, fmt.Errorf("train: kernel components must be between 1 and 65536, not %d", p.Components)
	}
	if err := checkPositive("kernel gamma", p.Gamma); err != nil {
		return nil, err
	}
	m := &rffMap{enc: enc, freq: (p.Components + 1) / 2, in: enc.dim - 1}
	// ChaCha8 is fully specified, so the same seed yields the same features
	// in every Go release; normals come from Box–Muller on its output rather
	// than from NormFloat64, whose algorithm the standard library may change.
	src := mrand.NewChaCha8(p.Seed)
	uniform := func() float64 { return (float64(src.Uint64()>>11) + 0.5) / (1 << 53) }
	sd := math.Sqrt(2 * p.Gamma)
	m.omega = make([]float64, m.freq*m.in)
	for j := 0; j < len(m.omega); j += 2 {
		r := math.Sqrt(-2 * math.Log(uniform()))
		t := 2 * math.Pi * uniform()
		m.omega[j] = sd * r * math.Cos(t)
		if j+1 < len(m.omega) {
			m.omega[j+1] = sd * r * math.Sin(t)
		}
	}
	// z(x) = (1/√2)·[(1/√m)cos ω_jᵀx, (1/√m)sin ω_jᵀx, 1]: E[zᵀz'] over ω is
	// (k(x, x') + 1)/2, and ‖z‖ = 1 exactly for every x (the cos/sin pair form
	// of Sutherland, Schneider 2015), which the theorem's ‖x‖ ≤ 1 needs; the
	// factor 1 − 2⁻²⁰ absorbs float32 rounding.
	m.scale = (1 - 0x1p-20) / math.Sqrt(2*float64(m.freq))
	return m, nil
}

func (m *rffMap) dim() int { return 2*m.freq + 1 }

// apply writes the features of a compact row into z.
func (m *rffMap) apply(num []float32, cat []uint16, z []float32) {
	e := m.enc
	for j := range m.freq {
		w := m.omega[j*m.in : (j+1)*m.in]
		var t float64
		for s, fi := range e.numeric {
			t += w[e.offset[fi]] * float64(num[s])
		}
		for s, fi := range e.groups {
			if cat[s] != missingCode {
				t += w[e.offset[fi]+int(cat[s])]
			}
		}
		sin, cos := math.Sincos(t)
		z[j] = float32(m.scale * cos)
		z[m.freq+j] = float32(m.scale * sin)
	}
	z[2*m.freq] = float32(m.scale * math.Sqrt(float64(m.freq)))
}

// materialise computes the features of every row of d, refusing when they
// would take the Data past its memory cap.
func (m *rffMap) materialise(d *Data) (denseDesign, error) {
	width := m.dim()
	need := int64(d.Len()) * int64(width) * 4
	if d.Bytes()+need > d.maxBytes {
		return denseDesign{}, fmt.Errorf("train: %d random features for %d rows need %d bytes, over the memory cap of %d bytes with the rows' own %d; use fewer components or rows", width, d.Len(), need, d.maxBytes, d.Bytes())
	}
	x := make([]float32, d.Len()*width)
	for i := range d.Len() {
		num, cat := d.row(i)
		m.apply(num, cat, x[i*width:(i+1)*width])
	}
	// The bias column as stored (float32), so that an offset folded into
	// its weight scores exactly as it did in the fit.
	bias := float64(float32(m.scale * math.Sqrt(float64(m.freq))))
	return denseDesign{x: x, width: width, labels: d.label, biasV: bias}, nil
}
