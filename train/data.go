package train

import (
	"fmt"
)

// DefaultMaxBytes is the default memory cap of a Data: 1 GiB.
const DefaultMaxBytes = 1 << 30

// Data holds training rows in compact form as they stream in: per row, the
// numeric features as float32 in [−1, 1], one uint16 category index per
// categorical feature and the label. Adult (5 numeric, 8 categorical) takes
// 37 bytes a row. Growth stops at the byte cap with an error, never an OOM;
// a Data made by NewSampledData instead samples and never fails (see
// sample.go).
type Data struct {
	enc      *Encoder
	maxBytes int64
	num      []float32 // rows × numeric features
	cat      []uint16  // rows × categorical features
	label    []bool

	// plan, when set, makes Add keep each row with probability plan.Rate
	// and drop silently past plan.Cap rows.
	plan *SamplePlan
	// dropped counts rows kept by the coin but dropped for the cap. It is
	// private (it depends on the data): only tests read it.
	dropped int64
}

// NewData returns an empty Data for rows encoded by enc that may use at most
// maxBytes of memory (DefaultMaxBytes when maxBytes ≤ 0).
func NewData(enc *Encoder, maxBytes int64) *Data {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	return &Data{enc: enc, maxBytes: maxBytes}
}

// NewSampledData returns an empty Data that loads rows as plan says: each
// row passed to Add is kept independently with probability plan.Rate (a coin
// from crypto/rand), and rows kept past plan.Cap are dropped silently. Its
// Add fails only on a row of the wrong length, never because of a value or
// of the cap. Fit it with Options.Labels and Options.Sample set to the
// release and the plan.
func NewSampledData(enc *Encoder, plan *SamplePlan) *Data {
	return &Data{enc: enc, maxBytes: plan.MaxBytes, plan: plan}
}

// rowBytes is the memory one row takes.
func (d *Data) rowBytes() int64 {
	return int64(4*len(d.enc.numeric) + 2*len(d.enc.groups) + 1)
}

// Add appends one row: values in the encoder's feature order (int64, float64,
// string, []byte or nil for NULL) and its label.
//
// A value that is not of its feature's kind (a string that is not a number
// for a numeric feature, say) is encoded as NULL: the encoding is total, so
// that no row's value can make a statement fail.
func (d *Data) Add(values []any, label bool) error {
	if len(values) != len(d.enc.features) {
		return fmt.Errorf("train: row has %d values, want %d (one per feature)", len(values), len(d.enc.features))
	}
	n := len(d.label)
	if d.plan != nil {
		// The coin: a uniform multiple of 2⁻⁵³ in [0, 1) is below q (itself
		// a multiple of 2⁻⁵³) with probability exactly q.
		if d.plan.Rate < 1 && !(secureRand.Float64() < d.plan.Rate) {
			return nil
		}
		if int64(n) >= d.plan.Cap {
			d.dropped++
			return nil
		}
	} else if int64(n+1)*d.rowBytes() > d.maxBytes {
		return fmt.Errorf("train: the training rows need more than the memory cap of %d bytes (%d rows of %d bytes); sample fewer rows or raise the cap", d.maxBytes, n+1, d.rowBytes())
	}
	if n == cap(d.label) {
		d.grow()
	}
	p, g := len(d.enc.numeric), len(d.enc.groups)
	d.num = d.num[:(n+1)*p]
	d.cat = d.cat[:(n+1)*g]
	if err := d.enc.encode(values, d.num[n*p:], d.cat[n*g:]); err != nil {
		d.num, d.cat = d.num[:n*p], d.cat[:n*g]
		return fmt.Errorf("%w (row %d)", err, n+1)
	}
	d.label = append(d.label, label)
	return nil
}

// grow doubles the capacity, but never beyond the cap, so that the buffers
// themselves respect it (append's own growth could overshoot by 25–100%).
func (d *Data) grow() {
	n := len(d.label)
	limit := int(d.maxBytes / d.rowBytes())
	if d.plan != nil {
		limit = int(d.plan.Cap)
	}
	c := min(max(2*n, 1024), limit)
	p, g := len(d.enc.numeric), len(d.enc.groups)
	num := make([]float32, n*p, c*p)
	copy(num, d.num)
	cat := make([]uint16, n*g, c*g)
	copy(cat, d.cat)
	label := make([]bool, n, c)
	copy(label, d.label)
	d.num, d.cat, d.label = num, cat, label
}

// Len returns the number of rows added. It is private information: Fit never
// releases it (see the package documentation).
func (d *Data) Len() int { return len(d.label) }

// Bytes returns the memory the rows take now.
func (d *Data) Bytes() int64 { return int64(len(d.label)) * d.rowBytes() }

// Encoder returns the encoder the rows were encoded with.
func (d *Data) Encoder() *Encoder { return d.enc }

// row returns the compact form of row i.
func (d *Data) row(i int) ([]float32, []uint16) {
	p, g := len(d.enc.numeric), len(d.enc.groups)
	return d.num[i*p : (i+1)*p], d.cat[i*g : (i+1)*g]
}

// labelCounts returns how many rows have a true and how many a false label.
func (d *Data) labelCounts() (pos, neg int64) {
	for _, l := range d.label {
		if l {
			pos++
		}
	}
	return pos, int64(len(d.label)) - pos
}
