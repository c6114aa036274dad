package train

// design is a training set as the solver sees it: rows x_i with ‖x_i‖ ≤ 1 and
// labels y_i ∈ {−1, +1}. A row is returned either sparse (column indices and
// values) or dense (cols nil, one value per column).
type design interface {
	len() int
	dim() int
	label(i int) float64
	row(i int, cols []int32, vals []float64) ([]int32, []float64)
	// l1Bound is a public bound on ‖x_i‖₁ for every possible row, or 0 when
	// none better than √dim is known.
	l1Bound() float64
	// bias is the value of the last (constant) column in every row.
	bias() float64
}

// linearDesign reads the rows of a Data, a subset of them when idx is not nil,
// as sparse vectors: each row has one entry per numeric feature, at most one
// per categorical group and the bias.
type linearDesign struct {
	d   *Data
	idx []int32
}

func (l linearDesign) len() int {
	if l.idx != nil {
		return len(l.idx)
	}
	return l.d.Len()
}

func (l linearDesign) dim() int { return l.d.enc.dim }

// l1Bound: a row has at most one nonzero per numeric feature, one per
// categorical group and the bias, each at most the scale 1/K in magnitude,
// with K² = numeric + groups + 1 of them: ‖x‖₁ ≤ K²/K = K.
func (l linearDesign) l1Bound() float64 {
	e := l.d.enc
	return float64(len(e.numeric)+len(e.groups)+1) * e.scale
}

func (l linearDesign) bias() float64 { return l.d.enc.scale }

func (l linearDesign) at(i int) int {
	if l.idx != nil {
		return int(l.idx[i])
	}
	return i
}

func (l linearDesign) label(i int) float64 {
	if l.d.label[l.at(i)] {
		return 1
	}
	return -1
}

func (l linearDesign) row(i int, cols []int32, vals []float64) ([]int32, []float64) {
	e := l.d.enc
	num, cat := l.d.row(l.at(i))
	cols, vals = cols[:0], vals[:0]
	for s, fi := range e.numeric {
		cols = append(cols, int32(e.offset[fi]))
		vals = append(vals, float64(num[s])*e.scale)
	}
	for s, fi := range e.groups {
		if cat[s] != missingCode {
			cols = append(cols, int32(e.offset[fi]+int(cat[s])))
			vals = append(vals, e.scale)
		}
	}
	cols = append(cols, int32(e.dim-1))
	vals = append(vals, e.scale)
	return cols, vals
}

// denseDesign holds materialised feature vectors (random Fourier features),
// float32 to halve the memory, with the labels of the underlying Data.
type denseDesign struct {
	x      []float32 // rows × width, for every row of labels
	width  int
	labels []bool
	idx    []int32
	biasV  float64 // the constant last column
}

func (m denseDesign) len() int {
	if m.idx != nil {
		return len(m.idx)
	}
	return len(m.labels)
}

func (m denseDesign) dim() int { return m.width }

func (m denseDesign) l1Bound() float64 { return 0 }

func (m denseDesign) bias() float64 { return m.biasV }

func (m denseDesign) at(i int) int {
	if m.idx != nil {
		return int(m.idx[i])
	}
	return i
}

func (m denseDesign) label(i int) float64 {
	if m.labels[m.at(i)] {
		return 1
	}
	return -1
}

func (m denseDesign) row(i int, _ []int32, vals []float64) ([]int32, []float64) {
	r := m.at(i)
	vals = vals[:0]
	for _, v := range m.x[r*m.width : (r+1)*m.width] {
		vals = append(vals, float64(v))
	}
	return nil, vals
}

// subset returns the design restricted to the given rows (indices into the
// full design).
func subset(d design, idx []int32) design {
	switch t := d.(type) {
	case linearDesign:
		return linearDesign{d: t.d, idx: idx}
	case denseDesign:
		return denseDesign{x: t.x, width: t.width, labels: t.labels, idx: idx, biasV: t.biasV}
	}
	panic("train: unknown design")
}
