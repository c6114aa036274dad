package train

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// objective is the perturbed regularised logistic loss of Chaudhuri et al.
// (2011), Algorithm 2, step 4, written with a normaliser N:
//
//	J(w) = (1/N)·[Σ_i ℓ(y_i (wᵀx_i + o)) + bᵀw] + (λ/2)‖w‖²,   ℓ(z) = log(1 + e^{−z}),
//
// where λ already includes the paper's extra regulariser Δ. N is the row count
// the privacy analysis may use (public or DP, see the package documentation)
// and o a fixed offset (the logit of the released base rate, or 0); with
// b = 0, o = 0 and N = n it is ordinary L2-regularised logistic regression.
// The offset leaves the loss's bounds as the paper needs them: as a function
// of w, ℓ_i(w) = ℓ(y_i(wᵀx_i + o)) has ∇ℓ_i = ℓ'·y_i·x_i with |ℓ'| ≤ 1 and
// ∇²ℓ_i = ℓ”·x_i x_iᵀ with 0 ≤ ℓ” ≤ 1/4, for every o. J is λ-strongly
// convex and smooth, so it has one minimiser.
//
// The solver works in v = w − w₀ with w₀ = −b/(Nλ), the minimiser of the
// perturbation and regulariser alone: since λw₀ = −b/N,
// (λ/2)‖w‖² + bᵀw/N = (λ/2)‖v‖² + constant, so
// J(w₀ + v) = (1/N)Σ_i ℓ(y_i (w₀+v)ᵀx_i) + (λ/2)‖v‖² + constant. Without the
// shift, a large b makes J the difference of two large terms and the line
// search loses the decrease in rounding; the gradient is the same either way.
type objective struct {
	d      design
	n      float64
	lambda float64
	origin []float64 // w₀; nil when there is no perturbation
	offset float64   // o, added to every margin

	cols []int32
	vals []float64
}

func newObjective(d design, n, lambda float64, b []float64, offset float64) *objective {
	o := &objective{d: d, n: n, lambda: lambda, offset: offset, vals: make([]float64, 0, d.dim())}
	if b != nil {
		o.origin = make([]float64, len(b))
		for j, bj := range b {
			o.origin[j] = -bj / (n * lambda)
		}
	}
	return o
}

// weights returns w = w₀ + v.
func (o *objective) weights(v []float64) []float64 {
	w := append([]float64(nil), v...)
	for j := range o.origin {
		w[j] += o.origin[j]
	}
	return w
}

// margin returns y_i·((w₀+v)ᵀx_i + o) with the row left in o.cols, o.vals.
func (o *objective) margin(i int, v []float64) float64 {
	o.cols, o.vals = o.d.row(i, o.cols, o.vals)
	var s float64
	if o.cols == nil {
		for j, x := range o.vals {
			s += v[j] * x
			if o.origin != nil {
				s += o.origin[j] * x
			}
		}
	} else {
		for k, c := range o.cols {
			s += v[c] * o.vals[k]
			if o.origin != nil {
				s += o.origin[c] * o.vals[k]
			}
		}
	}
	return o.d.label(i) * (s + o.offset)
}

// logLoss returns log(1 + e^{−z}) without overflow.
func logLoss(z float64) float64 {
	if z > 0 {
		return math.Log1p(math.Exp(-z))
	}
	return -z + math.Log1p(math.Exp(z))
}

// sigmoid returns 1/(1 + e^{−z}).
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// value returns J(w₀ + v) up to a constant.
func (o *objective) value(v []float64) float64 {
	// Neumaier's compensated sum: near the minimum the line search compares
	// values that differ by less than the rounding of a plain sum of n terms.
	var loss, comp, vv float64
	for i := range o.d.len() {
		x := logLoss(o.margin(i, v))
		t := loss + x
		if math.Abs(loss) >= math.Abs(x) {
			comp += (loss - t) + x
		} else {
			comp += (x - t) + loss
		}
		loss = t
	}
	loss += comp
	for _, x := range v {
		vv += x * x
	}
	return loss/o.n + o.lambda/2*vv
}

// grad writes ∇J(w) = (1/N)[Σ_i −y_i σ(−m_i) x_i + b] + λw at w = w₀ + v
// (m_i the margin), which is (1/N)Σ_i −y_i σ(−m_i) x_i + λv.
func (o *objective) grad(g, v []float64) {
	clear(g)
	for i := range o.d.len() {
		a := -o.d.label(i) * sigmoid(-o.margin(i, v))
		o.addRow(g, a)
	}
	for j := range g {
		g[j] = g[j]/o.n + o.lambda*v[j]
	}
}

// addRow adds a·x_i to g for the row in o.cols, o.vals.
func (o *objective) addRow(g []float64, a float64) {
	if o.cols == nil {
		for j, v := range o.vals {
			g[j] += a * v
		}
		return
	}
	for k, c := range o.cols {
		g[c] += a * o.vals[k]
	}
}

// hess writes ∇²J(w₀ + v) = (1/N)Σ_i σ(z_i)σ(−z_i) x_i x_iᵀ + λI (z_i the margin).
// Its cost is rows × (nonzeros per row)², cheap for the sparse linear design.
func (o *objective) hess(h *mat.SymDense, w []float64) {
	dim := o.d.dim()
	raw := h.RawSymmetric()
	for r := range dim {
		clear(raw.Data[r*raw.Stride+r : r*raw.Stride+dim])
	}
	for i := range o.d.len() {
		z := o.margin(i, w)
		a := sigmoid(z) * sigmoid(-z)
		if o.cols == nil {
			for p, vp := range o.vals {
				rowp := raw.Data[p*raw.Stride:]
				for q := p; q < dim; q++ {
					rowp[q] += a * vp * o.vals[q]
				}
			}
			continue
		}
		for k, ck := range o.cols {
			av := a * o.vals[k]
			for l, cl := range o.cols {
				if cl >= ck { // the upper triangle, each unordered pair once
					raw.Data[int(ck)*raw.Stride+int(cl)] += av * o.vals[l]
				}
			}
		}
	}
	for r := range dim {
		row := raw.Data[r*raw.Stride : r*raw.Stride+dim]
		for q := r; q < dim; q++ {
			row[q] /= o.n
		}
		row[r] += o.lambda
	}
}
