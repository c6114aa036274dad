package train

import (
	"context"
	"math"
	"testing"
)

// TestOffsetInIntercept: with a regulariser so strong that every weight is
// all but 0, the released intercept (original scale) is the offset, the
// logit of the base rate, so the model predicts the base rate.
func TestOffsetInIntercept(t *testing.T) {
	d := synthetic(t, 400, 9)
	pos, _ := d.labelCounts()
	p := (float64(pos) + 0.5) / float64(d.Len()+1)
	m, err := Fit(context.Background(), d, Options{Epsilon: math.Inf(1), Lambda: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	got := m.Weights[len(m.Weights)-1]
	if want := math.Log(p / (1 - p)); math.Abs(got-want) > 1e-3 {
		t.Errorf("intercept %v, want the logit of the base rate %v", got, want)
	}
}

// TestLabelHistogram checks the private counts: N and the offset scatter
// around the truth with the discrete Laplace noise of the label share of ε.
func TestLabelHistogram(t *testing.T) {
	d := synthetic(t, 2000, 10)
	pos, neg := d.labelCounts()
	wantOffset := math.Log(float64(pos) / float64(neg))
	const eps, draws = 2.0, 400
	var sumN, sumOffset float64
	for range draws {
		e := eps
		s, err := labelHistogram(d, &Options{Epsilon: eps}, &e, 28)
		if err != nil {
			t.Fatal(err)
		}
		if want := eps * (1 - labelShare); math.Abs(e-want) > 1e-12 {
			t.Fatalf("the histogram left ε = %v for the fit, want %v", e, want)
		}
		sumN += s.n
		sumOffset += s.offset
	}
	// Each count has Laplace scale 1/(labelShare·ε) = 10, the sum's
	// standard deviation is 20; the mean of 400 is within 5 units.
	if mean := sumN / draws; math.Abs(mean-2000) > 5 {
		t.Errorf("mean N = %v, want 2000", mean)
	}
	if mean := sumOffset / draws; math.Abs(mean-wantOffset) > 0.01 {
		t.Errorf("mean offset %v, want about %v", mean, wantOffset)
	}
	// A public N spends nothing and gives no base rate.
	e := eps
	s, err := labelHistogram(d, &Options{Epsilon: eps, PublicRows: 1234}, &e, 28)
	if err != nil || s.n != 1234 || s.offset != 0 || e != eps {
		t.Errorf("with a public N: %+v, ε left %v, %v", s, e, err)
	}
}

// TestSmallDataFallsBackToMajority: at n·ε = 10 on 1,000 Adult rows the
// objective's noise swamps the data; Fit moves most of ε to the label
// histogram, and with λ = 10 the weights shrink to the offset, so the model
// predicts the majority class (76.4% on the test split) in most runs instead
// of a random one. Without the released base rate the median was 58.9%.
func TestSmallDataFallsBackToMajority(t *testing.T) {
	d := adultData(t, 1000)
	var accs []float64
	for range 15 {
		m, err := Fit(context.Background(), d, Options{Epsilon: 0.01, Lambda: 10})
		if err != nil {
			t.Fatal(err)
		}
		accs = append(accs, testAccuracy(t, m))
	}
	if med := median(accs); med < 0.76 {
		t.Errorf("median accuracy %.4f at ε = 0.01 on 1,000 rows, want the majority rate 0.764", med)
	}
}

// TestSmallDataMovesEpsilon: when the first histogram's N·ε is under the
// threshold, a second histogram takes refineShare of ε; the branches are the
// only two ways ε is split, and on 10 rows at ε = 1 (threshold 140) the
// refined one is all but certain.
func TestSmallDataMovesEpsilon(t *testing.T) {
	if !smallData(27, 5, 28) || smallData(29, 5, 28) {
		t.Errorf("smallData: the threshold n·ε < 5·28 = 140 is not where it should be")
	}
	d := synthetic(t, 10, 11)
	refined := 0
	for range 50 {
		e := 1.0
		if _, err := labelHistogram(d, &Options{Epsilon: 1}, &e, 28); err != nil {
			t.Fatal(err)
		}
		switch {
		case math.Abs(e-(1-labelShare-refineShare)) < 1e-12:
			refined++
		case math.Abs(e-(1-labelShare)) < 1e-12:
		default:
			t.Fatalf("the histogram left ε = %v, neither branch's share", e)
		}
	}
	if refined < 45 {
		t.Errorf("only %d of 50 fits on 10 rows at ε = 1 refined the histogram", refined)
	}
}
