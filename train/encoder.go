package train

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Feature describes one input column from public information only (the
// policy), never from the data: a numeric column by its public bounds, a
// categorical one by its public values.
type Feature struct {
	Name         string
	Numeric      bool
	Lower, Upper float64  // numeric: public bounds; values are clamped to them
	Categories   []string // categorical: the public values, one-hot encoded
}

// missingCode marks a categorical value that is NULL or not among the public
// categories: it sets no one-hot column.
const missingCode = math.MaxUint16

// Encoder maps a row of feature values to the vector x the learner sees.
//
// Each numeric value v is clamped to its public [Lower, Upper] and mapped to
// u = (v − mid)/half ∈ [−1, 1] (mid and half the centre and half-width of the
// bounds); NULL becomes u = 0, the centre. Each categorical value sets one
// one-hot column of its group (none when NULL or not a public value). A
// constant bias column is added. The whole vector is then divided by the public
// constant K = √(numeric features + categorical groups + 1): every coordinate
// group contributes at most 1 to ‖x‖², so ‖x‖ ≤ 1 as Chaudhuri et al. (2011)
// require of every row (their Section 2 assumption ‖x_i‖ ≤ 1).
//
// K is the same for every row, so the score wᵀx is an affine function of the
// clamped original values and Model.Weights can report it exactly on the
// original scale (see originalWeights). Normalising each row by its own norm
// would be tighter but would make the score non-linear in the values.
type Encoder struct {
	features []Feature
	numeric  []int            // feature index of each numeric slot
	groups   []int            // feature index of each categorical slot
	codes    []map[string]int // per categorical slot: value → category index
	offset   []int            // per feature: its first column
	dim      int
	scale    float64 // 1/K
	names    []string
}

// NewEncoder checks the features and returns their encoder. A categorical
// feature without public values is refused: its categories would have to be
// read from the private data.
func NewEncoder(features []Feature) (*Encoder, error) {
	if len(features) == 0 {
		return nil, errors.New("train: no features: name at least one input column")
	}
	e := &Encoder{features: append([]Feature(nil), features...), offset: make([]int, len(features))}
	seen := map[string]bool{}
	for i, f := range features {
		key := strings.ToLower(f.Name)
		switch {
		case f.Name == "":
			return nil, fmt.Errorf("train: feature %d has no name", i+1)
		case seen[key]:
			return nil, fmt.Errorf("train: feature %q is listed twice", f.Name)
		}
		seen[key] = true
		e.offset[i] = e.dim
		if f.Numeric {
			if err := checkBounds(f); err != nil {
				return nil, err
			}
			e.numeric = append(e.numeric, i)
			e.names = append(e.names, f.Name)
			e.dim++
			continue
		}
		if len(f.Categories) == 0 {
			return nil, fmt.Errorf("train: categorical feature %q has no public values; declare its public_values in the policy (its categories may not be read from the data)", f.Name)
		}
		if len(f.Categories) >= missingCode {
			return nil, fmt.Errorf("train: categorical feature %q has %d public values, more than the %d supported", f.Name, len(f.Categories), missingCode-1)
		}
		codes := make(map[string]int, len(f.Categories))
		for j, c := range f.Categories {
			if _, dup := codes[c]; dup {
				return nil, fmt.Errorf("train: categorical feature %q lists the value %q twice", f.Name, c)
			}
			codes[c] = j
			e.names = append(e.names, f.Name+"="+c)
		}
		e.groups = append(e.groups, i)
		e.codes = append(e.codes, codes)
		e.dim += len(f.Categories)
	}
	e.names = append(e.names, InterceptName)
	e.dim++
	// The factor 1 − 2⁻³⁰ keeps ‖x‖ ≤ 1 despite the rounding of 1/√k and of
	// the float32 values Data stores: the theorem's bound holds exactly.
	e.scale = (1 - 0x1p-30) / math.Sqrt(float64(len(e.numeric)+len(e.groups)+1))
	return e, nil
}

// InterceptName names the bias feature in FeatureNames and Model.Features.
const InterceptName = "(intercept)"

func checkBounds(f Feature) error {
	if math.IsNaN(f.Lower) || math.IsInf(f.Lower, 0) || math.IsNaN(f.Upper) || math.IsInf(f.Upper, 0) {
		return fmt.Errorf("train: numeric feature %q needs finite public bounds, not [%v, %v]", f.Name, f.Lower, f.Upper)
	}
	if !(f.Lower < f.Upper) {
		return fmt.Errorf("train: numeric feature %q has bounds [%v, %v]; lower must be below upper", f.Name, f.Lower, f.Upper)
	}
	return nil
}

// Dim returns the length of the encoded vector, bias included.
func (e *Encoder) Dim() int { return e.dim }

// FeatureNames returns one name per encoded column: the numeric feature's
// name ("age"), "feature=value" for a one-hot column ("sex=Male"), and
// InterceptName last.
func (e *Encoder) FeatureNames() []string { return append([]string(nil), e.names...) }

// Features returns the features the encoder was built from.
func (e *Encoder) Features() []Feature { return append([]Feature(nil), e.features...) }

// encode writes the compact form of one row: the mapped numeric values u ∈
// [−1, 1] (before the 1/K scale) and each group's category index. It fails
// only on a row of the wrong length.
func (e *Encoder) encode(values []any, num []float32, cat []uint16) error {
	if len(values) != len(e.features) {
		return fmt.Errorf("train: row has %d values, want %d (one per feature)", len(values), len(e.features))
	}
	for s, fi := range e.numeric {
		f := e.features[fi]
		// A value that is not a number (a string in a numeric column of a
		// dynamically typed backend, say) is taken as NULL: the encoding
		// is total, so no row's value can fail a release.
		v, ok, err := numericValue(values[fi])
		if err != nil {
			ok = false
		}
		num[s] = 0 // NULL: the centre of the public range
		if ok {
			num[s] = float32(unitScale(v, f.Lower, f.Upper))
		}
	}
	for s, fi := range e.groups {
		cat[s] = missingCode
		key, ok, err := categoryValue(values[fi])
		if err != nil {
			ok = false // not a category: as NULL, like a value outside the public ones
		}
		if c, known := e.codes[s][key]; ok && known {
			cat[s] = uint16(c)
		}
	}
	return nil
}

// dense writes the encoded vector x (scale 1/K included) of a compact row.
func (e *Encoder) dense(num []float32, cat []uint16, x []float64) {
	clear(x)
	for s, fi := range e.numeric {
		x[e.offset[fi]] = float64(num[s]) * e.scale
	}
	for s, fi := range e.groups {
		if cat[s] != missingCode {
			x[e.offset[fi]+int(cat[s])] = e.scale
		}
	}
	x[e.dim-1] = e.scale
}

// unitScale clamps v to [lo, hi] and maps it affinely onto [−1, 1].
func unitScale(v, lo, hi float64) float64 {
	v = min(max(v, lo), hi)
	mid, half := lo+(hi-lo)/2, (hi-lo)/2
	return min(max((v-mid)/half, -1), 1)
}

// numericValue converts a driver value to float64; ok is false for NULL.
func numericValue(v any) (x float64, ok bool, err error) {
	switch t := v.(type) {
	case nil:
		return 0, false, nil
	case int64:
		x = float64(t)
	case int:
		x = float64(t)
	case int32:
		x = float64(t)
	case uint64:
		x = float64(t)
	case float64:
		x = t
	case float32:
		x = float64(t)
	case bool:
		if t {
			x = 1
		}
	case []byte:
		return numericValue(string(t))
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		if err != nil {
			return 0, false, fmt.Errorf("%q is not a number", t)
		}
		x = f
	default:
		return 0, false, fmt.Errorf("a %T is not a number", v)
	}
	if math.IsNaN(x) {
		return 0, false, nil
	}
	return x, true, nil
}

// categoryValue renders a driver value as the string its public value is
// written as; ok is false for NULL.
func categoryValue(v any) (string, bool, error) {
	switch t := v.(type) {
	case nil:
		return "", false, nil
	case string:
		return t, true, nil
	case []byte:
		return string(t), true, nil
	case int64:
		return strconv.FormatInt(t, 10), true, nil
	case int:
		return strconv.Itoa(t), true, nil
	case int32:
		return strconv.FormatInt(int64(t), 10), true, nil
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64), true, nil
	case bool:
		return strconv.FormatBool(t), true, nil
	default:
		return "", false, fmt.Errorf("a %T cannot be a category", v)
	}
}
