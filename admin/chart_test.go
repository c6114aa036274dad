package admin

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestNiceAxis(t *testing.T) {
	for _, c := range []struct {
		lo, hi             float64
		min, max, stepWant float64
	}{
		{0, 12, 0, 15, 5},
		{0, 0.37, 0, 0.4, 0.1},
		{0, 0, 0, 1, 0.2},
		{0, 95, 0, 100, 20},
		{-3, 7, -4, 8, 2},
	} {
		lo, hi, step := niceAxis(c.lo, c.hi, yTickTarget)
		if !close(lo, c.min) || !close(hi, c.max) || !close(step, c.stepWant) {
			t.Errorf("niceAxis(%g, %g) = [%g, %g] step %g; want [%g, %g] step %g", c.lo, c.hi, lo, hi, step, c.min, c.max, c.stepWant)
		}
		if lo > c.lo || hi < c.hi {
			t.Errorf("niceAxis(%g, %g) = [%g, %g] does not cover the data", c.lo, c.hi, lo, hi)
		}
	}
}

func close(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// vertices parses an SVG points attribute.
func vertices(t *testing.T, points string) [][2]float64 {
	t.Helper()
	var out [][2]float64
	for _, p := range strings.Fields(points) {
		x, y, ok := strings.Cut(p, ",")
		fx, err1 := strconv.ParseFloat(x, 64)
		fy, err2 := strconv.ParseFloat(y, 64)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("bad point %q", p)
		}
		out = append(out, [2]float64{fx, fy})
	}
	return out
}

func TestChartIsCumulativeStepsPerRole(t *testing.T) {
	since := fixedNow.Add(-24 * time.Hour)
	c0 := buildChart(samplePoints(fixedNow), since, fixedNow, time.UTC)
	if len(c0.Series) != 2 || c0.Series[0].Role != "analyst" || c0.Series[1].Role != "auditors" {
		t.Fatalf("series %+v", c0.Series)
	}
	// samplePoints has a charge of 100 from 48 h ago, before the window:
	// it must not count. The y axis is then [0, 15].
	_, yMax, _ := niceAxis(0, 12, yTickTarget)
	yOf := func(v float64) float64 { return plotBottom - v/yMax*(plotBottom-plotTop) }
	// analyst's first charge is at the window's start; auditors' is later.
	for i, c := range []struct{ first, total float64 }{{0.5, 12}, {0, 8}} {
		s := c0.Series[i]
		wantTotal := c.total
		v := vertices(t, s.Points)
		if v[0][0] != plotLeft || math.Abs(v[0][1]-yOf(c.first)) > 0.06 {
			t.Errorf("%s starts at %v, want (%g, %.1f)", s.Role, v[0], plotLeft, yOf(c.first))
		}
		if last := v[len(v)-1]; last[0] != plotRight || math.Abs(last[1]-yOf(wantTotal)) > 0.06 {
			t.Errorf("%s ends at %v, want (%g, %.1f)", s.Role, last, plotRight, yOf(wantTotal))
		}
		for j := 1; j < len(v); j++ {
			dx, dy := v[j][0]-v[j-1][0], v[j][1]-v[j-1][1]
			if dx < 0 || dy > 0 || (dx != 0 && dy != 0) {
				t.Fatalf("%s: segment %v→%v is not a rising step", s.Role, v[j-1], v[j])
			}
		}
		if s.Total != formatEpsilon(wantTotal) {
			t.Errorf("%s total %q, want %g", s.Role, s.Total, wantTotal)
		}
	}
	if c0.Series[0].Class == c0.Series[1].Class {
		t.Error("two roles share a colour")
	}
}

func TestChartBoundsVerticesForManyCharges(t *testing.T) {
	since := fixedNow.Add(-time.Hour)
	var ps []SpendPoint
	for i := range 100_000 {
		ps = append(ps, SpendPoint{Time: since.Add(time.Duration(i) * 36 * time.Millisecond), Role: "analyst", Epsilon: 1e-4})
	}
	c := buildChart(ps, since, fixedNow, time.UTC)
	v := vertices(t, c.Series[0].Points)
	if limit := 2*int(plotRight-plotLeft) + 4; len(v) > limit {
		t.Errorf("%d vertices for 100000 charges, want at most %d", len(v), limit)
	}
	if c.Series[0].Total != "10" {
		t.Errorf("total %q, want 10", c.Series[0].Total)
	}
}

func TestChartRefundsAndNonsense(t *testing.T) {
	since := fixedNow.Add(-time.Hour)
	ps := []SpendPoint{
		{Time: since.Add(10 * time.Minute), Role: "a", Epsilon: 2},
		{Time: since.Add(20 * time.Minute), Role: "a", Epsilon: -2}, // refund
		{Time: since.Add(30 * time.Minute), Role: "a", Epsilon: math.NaN()},
		{Time: since.Add(40 * time.Minute), Role: "a", Epsilon: math.Inf(1)},
		{Time: fixedNow.Add(time.Hour), Role: "a", Epsilon: 1}, // clock skew: drawn at now
	}
	c := buildChart(ps, since, fixedNow, time.UTC)
	if got := c.Series[0].Total; got != "1" {
		t.Errorf("total %q, want 1", got)
	}
	for _, p := range vertices(t, c.Series[0].Points) {
		if p[0] < plotLeft || p[0] > plotRight || p[1] < plotTop || p[1] > plotBottom {
			t.Errorf("vertex %v outside the plot", p)
		}
	}
}

func TestTimeTicks(t *testing.T) {
	ist := time.FixedZone("IST", 5*3600+1800)
	for _, c := range []struct {
		span  time.Duration
		loc   *time.Location
		first string
		step  time.Duration
	}{
		{24 * time.Hour, time.UTC, "18:00", 3 * time.Hour},
		{time.Hour, time.UTC, "14:10", 10 * time.Minute},
		{7 * 24 * time.Hour, time.UTC, "Mar 8", 24 * time.Hour},
		{30 * 24 * time.Hour, time.UTC, "Feb 13", 7 * 24 * time.Hour},
		{24 * time.Hour, ist, "21:00", 3 * time.Hour}, // 15:07 UTC is 20:37 IST
	} {
		since := fixedNow.Add(-c.span)
		ticks := timeTicks(since, fixedNow, c.loc)
		if len(ticks) == 0 || len(ticks) > xTickMax {
			t.Fatalf("span %v: %d ticks", c.span, len(ticks))
		}
		if ticks[0].label != c.first {
			t.Errorf("span %v in %s: first tick %q, want %q", c.span, c.loc, ticks[0].label, c.first)
		}
		for i, tk := range ticks {
			if tk.at.Before(since) || tk.at.After(fixedNow) {
				t.Errorf("span %v: tick %v outside the window", c.span, tk.at)
			}
			if i > 0 && tk.at.Sub(ticks[i-1].at) != c.step {
				t.Errorf("span %v: ticks %v apart, want %v", c.span, tk.at.Sub(ticks[i-1].at), c.step)
			}
		}
	}
	// Midnight shows the date in an hourly axis.
	ticks := timeTicks(fixedNow.Add(-24*time.Hour), fixedNow, time.UTC)
	found := false
	for _, tk := range ticks {
		if tk.at.Hour() == 0 {
			found = tk.label == "Mar 14"
		}
	}
	if !found {
		t.Errorf("no midnight tick labelled Mar 14 in %v", ticks)
	}
}
