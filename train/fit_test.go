package train

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// synthetic returns n rows of testFeatures with labels from a logistic model.
func synthetic(t *testing.T, n int, seed uint64) *Data {
	t.Helper()
	e, err := NewEncoder(testFeatures())
	if err != nil {
		t.Fatal(err)
	}
	d := NewData(e, 0)
	r := rand.New(rand.NewPCG(seed, 7))
	for range n {
		age, hours := 20+40*r.Float64(), 100*r.Float64()
		male, grade := r.IntN(2), 1+r.IntN(3)
		score := 0.08*(age-40) - 0.03*(hours-50) + 0.7*float64(male) - 0.5*float64(grade-2)
		label := r.Float64() < 1/(1+math.Exp(-score))
		if err := d.Add([]any{age, []string{"Female", "Male"}[male], hours, int64(grade)}, label); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// plainLogReg fits L2-regularised logistic regression with a fixed offset
// added to every margin by gradient descent on the encoded rows,
// independently of the package's solver.
func plainLogReg(d *Data, lambda, offset float64) []float64 {
	dim := d.enc.Dim()
	xs := make([][]float64, d.Len())
	for i := range xs {
		num, cat := d.row(i)
		xs[i] = make([]float64, dim)
		d.enc.dense(num, cat, xs[i])
	}
	w := make([]float64, dim)
	g := make([]float64, dim)
	// The loss is (1/4 + λ)-smooth for ‖x‖ ≤ 1, so step 1/(1/4 + λ) converges.
	step := 1 / (0.25 + lambda)
	for range 200000 {
		for j := range g {
			g[j] = lambda * w[j]
		}
		for i, x := range xs {
			y := -1.0
			if d.label[i] {
				y = 1
			}
			m := offset
			for j := range x {
				m += w[j] * x[j]
			}
			a := -y / (1 + math.Exp(y*m)) / float64(len(xs))
			for j := range x {
				g[j] += a * x[j]
			}
		}
		if norm(g) < 1e-10 {
			break
		}
		for j := range w {
			w[j] -= step * g[j]
		}
	}
	return w
}

func TestNonPrivateMatchesPlainLogisticRegression(t *testing.T) {
	d := synthetic(t, 300, 1)
	// Fit adds the logit of the base rate, (pos + ½)/(n + 1), to every
	// margin and folds it into the intercept's raw weight afterwards.
	pos, _ := d.labelCounts()
	p := (float64(pos) + 0.5) / float64(d.Len()+1)
	offset := math.Log(p / (1 - p))
	want := plainLogReg(d, 0.01, offset)
	want[len(want)-1] += offset / d.enc.scale
	for _, eps := range []float64{math.Inf(1), 1e9} {
		m, err := Fit(context.Background(), d, Options{Epsilon: eps, Lambda: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		for j := range want {
			if math.Abs(m.RawWeights[j]-want[j]) > 1e-4 {
				t.Errorf("ε=%v: weight %s = %v, plain logistic regression gives %v", eps, m.Features[j], m.RawWeights[j], want[j])
			}
		}
	}
}

func TestNoiseScalesWithEpsilon(t *testing.T) {
	d := synthetic(t, 300, 2)
	exact, err := Fit(context.Background(), d, Options{Epsilon: math.Inf(1), Lambda: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{MethodObjective, MethodOutput} {
		var prev float64
		for _, eps := range []float64{0.1, 1, 10} {
			var dists []float64
			for range 21 {
				m, err := Fit(context.Background(), d, Options{Epsilon: eps, Lambda: 0.01, Method: method, PublicRows: 300})
				if err != nil {
					t.Fatal(err)
				}
				var s float64
				for j := range m.RawWeights {
					s += (m.RawWeights[j] - exact.RawWeights[j]) * (m.RawWeights[j] - exact.RawWeights[j])
				}
				dists = append(dists, math.Sqrt(s))
			}
			slices.Sort(dists)
			med := dists[len(dists)/2]
			if prev != 0 && !(med < prev/3) {
				t.Errorf("%s: median distance to the exact weights %v at ε=%v, not well below %v at ε/10", method, med, eps, prev)
			}
			prev = med
		}
	}
}

func median(x []float64) float64 {
	x = slices.Clone(x)
	slices.Sort(x)
	return x[len(x)/2]
}

// TestObjectiveBeatsOutputOnAdult repeats the paper's finding (Chaudhuri et
// al. 2011, Section 7) on Adult at ε = 1.
func TestObjectiveBeatsOutputOnAdult(t *testing.T) {
	d := adultData(t, 0)
	ceiling, err := Fit(context.Background(), d, Options{Epsilon: math.Inf(1), Lambda: 1e-4})
	if err != nil {
		t.Fatal(err)
	}
	top := testAccuracy(t, ceiling)
	if top < 0.84 || top > 0.86 {
		t.Errorf("non-private accuracy %.4f, want 84–85%%", top)
	}
	acc := map[string][]float64{}
	for range 5 {
		for _, method := range []string{MethodObjective, MethodOutput} {
			m, err := Fit(context.Background(), d, Options{Epsilon: 1, Lambda: 1e-4, Method: method})
			if err != nil {
				t.Fatal(err)
			}
			acc[method] = append(acc[method], testAccuracy(t, m))
		}
	}
	obj, out := median(acc[MethodObjective]), median(acc[MethodOutput])
	t.Logf("Adult, ε=1, λ=1e-4: non-private %.4f, objective %.4f, output %.4f", top, obj, out)
	if obj < top-0.01 {
		t.Errorf("objective perturbation's median accuracy %.4f is more than 1 point below the ceiling %.4f", obj, top)
	}
	if obj < out+0.02 {
		t.Errorf("objective perturbation (%.4f) does not beat output perturbation (%.4f)", obj, out)
	}
}

func TestAutoLambdaOnAdult(t *testing.T) {
	d := adultData(t, 0)
	m, err := Fit(context.Background(), d, Options{Epsilon: 1, AutoLambda: true})
	if err != nil {
		t.Fatal(err)
	}
	acc := testAccuracy(t, m)
	t.Logf("auto λ chose %v, accuracy %.4f, rows %d", m.Lambda, acc, m.Rows)
	// The candidates are autoFactors times the default λ of a quarter of the
	// rows (three candidates and the held-out part), which Rows reports.
	part := labelStats{n: float64(m.Rows)}
	base := defaultLambda(linearDesign{d: d}, part, 1-labelShare, MethodObjective)
	found := false
	for _, f := range autoFactors {
		found = found || math.Abs(m.Lambda/(f*base)-1) < 1e-3 // Rows is rounded down
	}
	if !found {
		t.Errorf("chose λ = %v, not one of %v × %v", m.Lambda, autoFactors, base)
	}
	// With ε = 1 the held-out counts differ by hundreds: the mechanism all
	// but surely picks the default or the weaker candidate, 82–84% on a
	// quarter of the rows.
	if acc < 0.81 {
		t.Errorf("auto λ accuracy %.4f, want ≥ 0.81", acc)
	}
	if m.Rows < 32000/4 || m.Rows > 33100/4 {
		t.Errorf("Rows = %d, want a quarter of the DP count near 32561", m.Rows)
	}
}

// TestDefaultLambda: λ·N·ε is the same at every scale (√v, the noise along a
// row), larger on small data, and 1/N without privacy.
func TestDefaultLambda(t *testing.T) {
	d := adultData(t, 100)
	des := linearDesign{d: d}
	v := noiseAlongRow(des)
	for _, c := range []struct{ n, eps float64 }{{1000, 1}, {32561, 0.1}, {5000, 3}} {
		l := defaultLambda(des, labelStats{n: c.n}, c.eps, MethodObjective)
		if got := l * c.n * c.eps; math.Abs(got-math.Sqrt(v)) > 1e-9 {
			t.Errorf("N=%v ε=%v: λ·N·ε = %v, want √%v", c.n, c.eps, got, v)
		}
		out := defaultLambda(des, labelStats{n: c.n}, c.eps, MethodOutput)
		if got := out * c.n * c.eps; math.Abs(got-math.Sqrt(float64(des.dim()+1))) > 1e-9 {
			t.Errorf("output: λ·N·ε = %v, want √(dim+1)", got)
		}
		small := defaultLambda(des, labelStats{n: c.n, small: true}, c.eps, MethodObjective)
		if small != smallShrink*l {
			t.Errorf("small data: λ = %v, want %v", small, smallShrink*l)
		}
	}
	if l := defaultLambda(des, labelStats{n: 200}, math.Inf(1), MethodObjective); l != 1.0/200 {
		t.Errorf("without privacy λ = %v, want 1/N", l)
	}
}

// TestDefaultLambdaOnAdult: with no λ given, the model on 5,000 rows at
// ε = 1 is well above the majority class (76.4%) and diffprivlib's best of
// three λ (79.4%); the fixed λ = 1e-3 the proxy used before scored 83.0%
// there (bench/trainbench), the default's λ·N·ε is 5.3.
func TestDefaultLambdaOnAdult(t *testing.T) {
	d := adultData(t, 5000)
	var accs []float64
	for range 5 {
		m, err := Fit(context.Background(), d, Options{Epsilon: 1})
		if err != nil {
			t.Fatal(err)
		}
		if m.Lambda <= 0 {
			t.Fatalf("default λ = %v", m.Lambda)
		}
		accs = append(accs, testAccuracy(t, m))
	}
	if acc := median(accs); acc < 0.81 {
		t.Errorf("default λ: median accuracy %.4f over 5 fits, want ≥ 0.81", acc)
	}
}

// TestKernelLearnsWhatLinearCannot: labels by the distance from the centre
// are not linearly separable; the RBF features make them so.
func TestKernelLearnsWhatLinearCannot(t *testing.T) {
	fs := []Feature{{Name: "a", Numeric: true, Lower: -1, Upper: 1}, {Name: "b", Numeric: true, Lower: -1, Upper: 1}}
	e, err := NewEncoder(fs)
	if err != nil {
		t.Fatal(err)
	}
	d := NewData(e, 0)
	r := rand.New(rand.NewPCG(5, 6))
	var rows [][]any
	var labels []bool
	for range 2000 {
		a, b := 2*r.Float64()-1, 2*r.Float64()-1
		rows = append(rows, []any{a, b})
		labels = append(labels, a*a+b*b < 0.5)
		if err := d.Add(rows[len(rows)-1], labels[len(labels)-1]); err != nil {
			t.Fatal(err)
		}
	}
	accuracy := func(m *Model) float64 {
		right := 0
		for i, v := range rows {
			p, err := m.Predict(v)
			if err != nil {
				t.Fatal(err)
			}
			if (p > 0.5) == labels[i] {
				right++
			}
		}
		return float64(right) / float64(len(rows))
	}
	lin, err := Fit(context.Background(), d, Options{Epsilon: math.Inf(1), Lambda: 1e-4})
	if err != nil {
		t.Fatal(err)
	}
	rbf, err := Fit(context.Background(), d, Options{Epsilon: math.Inf(1), Lambda: 1e-4, Kernel: &RFFOptions{Components: 100, Gamma: 1}})
	if err != nil {
		t.Fatal(err)
	}
	la, ra := accuracy(lin), accuracy(rbf)
	t.Logf("linear %.3f, rbf %.3f", la, ra)
	if la > 0.7 || ra < 0.9 {
		t.Errorf("linear accuracy %.3f, rbf %.3f; want the kernel to separate the disc", la, ra)
	}
	// A private kernel model, released through JSON, applies the same random
	// features when read back.
	priv, err := Fit(context.Background(), d, Options{Epsilon: 10, Lambda: 1e-3, Kernel: &RFFOptions{Components: 50, Gamma: 1}})
	if err != nil {
		t.Fatal(err)
	}
	blob, err := json.Marshal(priv)
	if err != nil {
		t.Fatal(err)
	}
	var back Model
	if err := json.Unmarshal(blob, &back); err != nil {
		t.Fatal(err)
	}
	for _, v := range rows[:100] {
		p1, err1 := priv.Predict(v)
		p2, err2 := back.Predict(v)
		if err1 != nil || err2 != nil || p1 != p2 {
			t.Fatalf("Predict(%v) = %v (%v) before JSON, %v (%v) after", v, p1, err1, p2, err2)
		}
	}
	t.Logf("private rbf (ε=10) %.3f", accuracy(priv))
}

func TestKernelMemoryCap(t *testing.T) {
	e, _ := NewEncoder(testFeatures())
	d := NewData(e, 13*100+1000)
	for range 100 {
		if err := d.Add([]any{30, "Male", 40, "2"}, true); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Fit(context.Background(), d, Options{Epsilon: 1, Lambda: 1e-2, Kernel: &RFFOptions{Components: 200, Gamma: 1}})
	if err == nil || !strings.Contains(err.Error(), "memory cap") {
		t.Errorf("200 random features for 100 rows under a 2,300-byte cap: %v", err)
	}
}

func TestFitStopsWhenCancelled(t *testing.T) {
	d := synthetic(t, 300, 3)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Fit(ctx, d, Options{Epsilon: 1, Lambda: 0.01}); !errors.Is(err, context.Canceled) {
		t.Errorf("Fit with a cancelled context: %v", err)
	}
	// Cancelled during the minimisation: the solver's status hook stops it.
	ctx, cancel = context.WithCancel(context.Background())
	o := newObjective(linearDesign{d: d}, 300, 0.01, nil, 0)
	calls := 0
	inner := o.d
	o.d = cancelAfter{design: inner, n: &calls, after: 3 * 300, cancel: cancel}
	if _, err := minimise(ctx, o, 1e-12); !errors.Is(err, context.Canceled) {
		t.Errorf("minimise cancelled midway: %v", err)
	}
}

// cancelAfter cancels its context after a number of row reads.
type cancelAfter struct {
	design
	n      *int
	after  int
	cancel func()
}

func (c cancelAfter) row(i int, cols []int32, vals []float64) ([]int32, []float64) {
	if *c.n++; *c.n == c.after {
		c.cancel()
	}
	return c.design.row(i, cols, vals)
}

func TestOptionsRefused(t *testing.T) {
	d := synthetic(t, 10, 4)
	cases := []struct {
		opts Options
		want string
	}{
		{Options{Lambda: 1}, "epsilon must be positive"},
		{Options{Epsilon: 1, Lambda: -1}, "lambda must be positive"},
		{Options{Epsilon: 1, Lambda: 1, Method: "sgd"}, "unknown method"},
		{Options{Epsilon: 1, Lambda: 1, Delta: 1}, "delta"},
		{Options{Epsilon: 1, AutoLambda: true, Lambdas: []float64{1, -1}}, "lambda must be positive"},
		{Options{Epsilon: 1, Lambda: 1, Kernel: &RFFOptions{Components: 10}}, "gamma must be positive"},
	}
	for _, c := range cases {
		if _, err := Fit(context.Background(), d, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Fit(%+v) = %v, want an error about %q", c.opts, err, c.want)
		}
	}
}
