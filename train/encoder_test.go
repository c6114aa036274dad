package train

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func testFeatures() []Feature {
	return []Feature{
		{Name: "age", Numeric: true, Lower: 20, Upper: 60},
		{Name: "sex", Categories: []string{"Female", "Male"}},
		{Name: "hours", Numeric: true, Lower: 0, Upper: 100},
		{Name: "grade", Categories: []string{"1", "2", "3"}},
	}
}

func encodeDense(t *testing.T, e *Encoder, values []any) []float64 {
	t.Helper()
	num := make([]float32, len(e.numeric))
	cat := make([]uint16, len(e.groups))
	if err := e.encode(values, num, cat); err != nil {
		t.Fatal(err)
	}
	x := make([]float64, e.Dim())
	e.dense(num, cat, x)
	return x
}

func TestEncoderNamesAndLayout(t *testing.T) {
	e, err := NewEncoder(testFeatures())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"age", "sex=Female", "sex=Male", "hours", "grade=1", "grade=2", "grade=3", "(intercept)"}
	if got := e.FeatureNames(); !slices.Equal(got, want) {
		t.Errorf("FeatureNames() = %q, want %q", got, want)
	}
	if e.Dim() != len(want) {
		t.Errorf("Dim() = %d, want %d", e.Dim(), len(want))
	}
}

func TestEncoderScalesByPublicBoundsAndClamps(t *testing.T) {
	e, err := NewEncoder(testFeatures())
	if err != nil {
		t.Fatal(err)
	}
	s := 1 / math.Sqrt(5) // 2 numeric + 2 groups + bias
	cases := []struct {
		values []any
		want   []float64 // before the 1/K scale
	}{
		{[]any{int64(20), "Male", 50.0, int64(2)}, []float64{-1, 0, 1, 0, 0, 1, 0, 1}},
		{[]any{int64(60), "Female", 100.0, "3"}, []float64{1, 1, 0, 1, 0, 0, 1, 1}},
		{[]any{int64(40), "Other", 25.0, nil}, []float64{0, 0, 0, -0.5, 0, 0, 0, 1}},      // unknown and NULL categories set nothing
		{[]any{int64(99), nil, -5.0, int64(1)}, []float64{1, 0, 0, -1, 1, 0, 0, 1}},       // clamped above and below
		{[]any{nil, "Male", []byte("75"), int64(9)}, []float64{0, 0, 1, 0.5, 0, 0, 0, 1}}, // NULL numeric: the centre
	}
	for _, c := range cases {
		got := encodeDense(t, e, c.values)
		for j := range got {
			if math.Abs(got[j]-c.want[j]*s) > 1e-6 {
				t.Errorf("encode(%v) = %v, want %v·(1/√5)", c.values, got, c.want)
				break
			}
		}
	}
}

func TestEncoderRowNormAtMostOne(t *testing.T) {
	e, err := NewEncoder(testFeatures())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	worst := 0.0
	for range 10000 {
		v := []any{r.Float64()*100 - 10, []string{"Female", "Male"}[r.IntN(2)], r.Float64()*300 - 100, int64(1 + r.IntN(3))}
		if r.IntN(2) == 0 { // at the bounds, where the norm is largest
			v[0], v[2] = float64(20+40*r.IntN(2)), float64(100*r.IntN(2))
		}
		worst = max(worst, norm(encodeDense(t, e, v)))
	}
	if worst > 1 {
		t.Errorf("largest row norm %v > 1", worst)
	}
	if worst < 0.999 {
		t.Errorf("largest row norm %v: the scale wastes the unit ball", worst)
	}
}

func norm(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

func TestEncoderRefusals(t *testing.T) {
	cases := []struct {
		features []Feature
		want     string
	}{
		{nil, "no features"},
		{[]Feature{{Name: "occupation"}}, "no public values"},
		{[]Feature{{Name: "a", Numeric: true, Lower: 1, Upper: 1}}, "lower must be below upper"},
		{[]Feature{{Name: "a", Numeric: true, Lower: 0, Upper: math.Inf(1)}}, "finite public bounds"},
		{[]Feature{{Name: "a", Numeric: true, Upper: 1}, {Name: "A", Numeric: true, Upper: 1}}, "listed twice"},
		{[]Feature{{Name: "a", Categories: []string{"x", "x"}}}, "twice"},
	}
	for _, c := range cases {
		_, err := NewEncoder(c.features)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewEncoder(%v) = %v, want an error about %q", c.features, err, c.want)
		}
	}
	e, _ := NewEncoder(testFeatures())
	d := NewData(e, 0)
	if err := d.Add([]any{1.0, "Male"}, true); err == nil {
		t.Error("a short row was accepted")
	}
	if d.Len() != 0 {
		t.Errorf("refused rows were kept: Len() = %d", d.Len())
	}
	// A value of the wrong kind is NULL, never an error: the encoding is
	// total, so no row's value can fail a release (issue 11).
	if err := d.Add([]any{"old", "Male", 1.0, struct{}{}}, true); err != nil || d.Len() != 1 {
		t.Errorf("a non-number for age: %v", err)
	}
	if num, cat := d.row(0); num[0] != 0 || cat[1] != missingCode {
		t.Errorf("a non-number encodes as %v %v, want NULL (the centre, no category)", num, cat)
	}
}

// TestOriginalScaleWeights checks that scoring with Model.Weights on the
// original values, as a user would in any tool, equals Predict.
func TestOriginalScaleWeights(t *testing.T) {
	e, err := NewEncoder(testFeatures())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	raw := make([]float64, e.Dim())
	for j := range raw {
		raw[j] = r.NormFloat64() * 3
	}
	m := &Model{Inputs: e.Features(), RawWeights: raw}
	m.setWeights(e)
	if !slices.Equal(m.Features, e.FeatureNames()) {
		t.Fatalf("Features = %q", m.Features)
	}
	weight := map[string]float64{}
	for j, n := range m.Features {
		weight[n] = m.Weights[j]
	}
	for range 1000 {
		age, hours := float64(r.IntN(80)), r.Float64()*150-20
		sex, grade := []string{"Female", "Male", "?"}[r.IntN(3)], []string{"1", "2", "3", "4"}[r.IntN(4)]
		p, err := m.Predict([]any{age, sex, hours, grade})
		if err != nil {
			t.Fatal(err)
		}
		// The user clamps to the public bounds, then scores.
		score := weight[InterceptName] + weight["age"]*min(max(age, 20), 60) + weight["hours"]*min(max(hours, 0), 100) +
			weight["sex="+sex] + weight["grade="+grade]
		if want := 1 / (1 + math.Exp(-score)); math.Abs(p-want) > 1e-5 {
			t.Fatalf("Predict(%v, %v, %v, %v) = %v; the original-scale weights give %v", age, sex, hours, grade, p, want)
		}
	}
}

func TestDataMemoryCap(t *testing.T) {
	e, err := NewEncoder(testFeatures())
	if err != nil {
		t.Fatal(err)
	}
	// A row takes 2·4 + 2·2 + 1 = 13 bytes: 100 bytes hold 7 rows.
	d := NewData(e, 100)
	var rows int
	for ; rows < 100; rows++ {
		err = d.Add([]any{30, "Male", 40, "2"}, true)
		if err != nil {
			break
		}
	}
	if rows != 7 || err == nil || !strings.Contains(err.Error(), "memory cap of 100 bytes") {
		t.Fatalf("after %d rows: %v; want the 8th row refused for the memory cap", rows, err)
	}
	if d.Bytes() > 100 || cap(d.label)*13 > 100 {
		t.Errorf("Data holds %d bytes with capacity for %d rows, over its cap", d.Bytes(), cap(d.label))
	}
}
