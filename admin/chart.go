package admin

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The chart is drawn in a fixed viewBox and scaled to the page's width.
const (
	chartW      = 960.0
	chartH      = 270.0
	plotLeft    = 56.0 // room for the ε labels
	plotRight   = chartW - 24
	plotTop     = 16.0
	plotBottom  = chartH - 32 // room for the time labels
	yTickTarget = 5
	xTickMax    = 8
	paletteSize = 8 // CSS classes s0…s7 and k0…k7 colour the series
)

// chartView is the cumulative-ε chart, laid out and ready to print.
type chartView struct {
	W, H                     float64
	Left, Right, Top, Bottom float64
	YLabelX, XTickEnd        float64 // where tick labels and tick marks go
	XLabelY, MidX, MidY      float64
	XTicks, YTicks           []tick
	Series                   []seriesView
	Empty                    bool
}

type tick struct {
	Pos   float64 // x or y in viewBox units
	Label string
}

// seriesView is one role's line: a step function of cumulative ε.
type seriesView struct {
	Role   string
	Class  int    // index into the palette
	Points string // SVG polyline points
	Total  string // ε spent in the window
	EndY   float64
}

// buildChart sums each role's charges since the window's start into a
// cumulative step function and lays it out on nice axes.
func buildChart(points []SpendPoint, since, now time.Time, loc *time.Location) chartView {
	c := chartView{
		W: chartW, H: chartH,
		Left: plotLeft, Right: plotRight, Top: plotTop, Bottom: plotBottom,
		YLabelX: plotLeft - 8, XTickEnd: plotBottom + 5, XLabelY: plotBottom + 20,
		MidX: (plotLeft + plotRight) / 2, MidY: (plotTop + plotBottom) / 2,
	}
	if !now.After(since) {
		now = since.Add(time.Minute)
	}

	byRole := make(map[string][]SpendPoint)
	for _, p := range points {
		// Charges before the window do not belong in it (a Source should
		// not return them); charges after now are clock skew, drawn at now.
		if math.IsNaN(p.Epsilon) || math.IsInf(p.Epsilon, 0) || p.Time.Before(since) {
			continue
		}
		byRole[p.Role] = append(byRole[p.Role], p)
	}
	roles := make([]string, 0, len(byRole))
	for r := range byRole {
		roles = append(roles, r)
	}
	slices.Sort(roles)

	// First pass: the cumulative range, for the y axis.
	lo, hi := 0.0, 0.0
	for _, r := range roles {
		ps := byRole[r]
		slices.SortStableFunc(ps, func(a, b SpendPoint) int { return a.Time.Compare(b.Time) })
		sum := 0.0
		for _, p := range ps {
			sum += p.Epsilon
			lo, hi = min(lo, sum), max(hi, sum)
		}
	}
	c.Empty = len(roles) == 0
	yMin, yMax, yStep := niceAxis(lo, hi, yTickTarget)

	xOf := func(t time.Time) float64 {
		t = clampTime(t, since, now)
		f := float64(t.Sub(since)) / float64(now.Sub(since))
		return plotLeft + f*(plotRight-plotLeft)
	}
	yOf := func(v float64) float64 {
		return plotBottom - (v-yMin)/(yMax-yMin)*(plotBottom-plotTop)
	}

	for i, r := range roles {
		s := stepLine(byRole[r], xOf, yOf)
		s.Role = r
		s.Class = i % paletteSize
		c.Series = append(c.Series, s)
	}
	for v := yMin; v <= yMax+yStep/2; v += yStep {
		c.YTicks = append(c.YTicks, tick{Pos: round1(yOf(v)), Label: formatEpsilon(roundTo(v, yStep))})
	}
	for _, t := range timeTicks(since, now, loc) {
		c.XTicks = append(c.XTicks, tick{Pos: round1(xOf(t.at)), Label: t.label})
	}
	return c
}

// stepLine draws the running sum of ps (sorted by time) as a step function
// from the window's left edge to its right edge. Vertices that land in the
// same viewBox column are merged, so a role with a million charges draws at
// most about 2 × (plotRight − plotLeft) vertices.
func stepLine(ps []SpendPoint, xOf func(time.Time) float64, yOf func(float64) float64) seriesView {
	type vertex struct{ x, y float64 }
	column := func(x float64) float64 { return math.Round(x) }

	verts := []vertex{{plotLeft, yOf(0)}}
	sum := 0.0
	for _, p := range ps {
		sum += p.Epsilon
		x, y := column(xOf(p.Time)), yOf(sum)
		last := &verts[len(verts)-1]
		if last.x == x {
			last.y = y // same column: the vertical segment just grows
			continue
		}
		verts = append(verts, vertex{x, last.y}, vertex{x, y})
	}
	if last := verts[len(verts)-1]; last.x < plotRight {
		verts = append(verts, vertex{plotRight, last.y})
	}

	var b strings.Builder
	for i, v := range verts {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatFloat(v.x, 'f', 1, 64))
		b.WriteByte(',')
		b.WriteString(strconv.FormatFloat(v.y, 'f', 1, 64))
	}
	return seriesView{Points: b.String(), Total: formatEpsilon(sum), EndY: verts[len(verts)-1].y}
}

// niceAxis widens [lo, hi] to multiples of a "nice" step (1, 2 or 5 times a
// power of ten) giving about target ticks: Heckbert's loose labelling
// (P. S. Heckbert, "Nice Numbers for Graph Labels", Graphics Gems, 1990,
// pp. 61–63). An empty range becomes [0, 1].
func niceAxis(lo, hi float64, target int) (axisMin, axisMax, step float64) {
	if hi <= lo {
		hi = lo + 1
	}
	span := niceNum(hi-lo, false)
	step = niceNum(span/float64(target-1), true)
	return math.Floor(lo/step) * step, math.Ceil(hi/step) * step, step
}

// niceNum returns a nice number near x: rounded to the nearest if round,
// else the smallest nice number ≥ x (Heckbert 1990).
func niceNum(x float64, round bool) float64 {
	exp := math.Floor(math.Log10(x))
	f := x / math.Pow(10, exp) // in [1, 10)
	var nf float64
	if round {
		switch {
		case f < 1.5:
			nf = 1
		case f < 3:
			nf = 2
		case f < 7:
			nf = 5
		default:
			nf = 10
		}
	} else {
		switch {
		case f <= 1:
			nf = 1
		case f <= 2:
			nf = 2
		case f <= 5:
			nf = 5
		default:
			nf = 10
		}
	}
	return nf * math.Pow(10, exp)
}

// round1 rounds a coordinate to a tenth of a viewBox unit, plenty for a
// screen and short in the page.
func round1(x float64) float64 { return math.Round(10*x) / 10 }

// roundTo removes the float error that repeated addition of step leaves in
// v (0.30000000000000004 for three steps of 0.1).
func roundTo(v, step float64) float64 {
	return math.Round(v/step) * step
}

type timeTick struct {
	at    time.Time
	label string
}

// tickSteps are the spacings the time axis may use, smallest first.
var tickSteps = []time.Duration{
	time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	24 * time.Hour, 2 * 24 * time.Hour, 7 * 24 * time.Hour, 14 * 24 * time.Hour,
}

// timeTicks places at most xTickMax ticks on round times (whole hours,
// local midnights) within [since, now]. Ticks at midnight show the date.
func timeTicks(since, now time.Time, loc *time.Location) []timeTick {
	span := now.Sub(since)
	step := tickSteps[len(tickSteps)-1]
	for _, s := range tickSteps {
		if span/s <= xTickMax {
			step = s
			break
		}
	}
	since, now = since.In(loc), now.In(loc)

	var t time.Time
	if step >= 24*time.Hour {
		y, m, d := since.Date()
		t = time.Date(y, m, d, 0, 0, 0, 0, loc)
		if t.Before(since) {
			t = t.AddDate(0, 0, 1) // the first midnight in the window
		}
	} else {
		// Truncate works on absolute time; shifting by the zone offset makes
		// the ticks fall on local round times.
		_, off := since.Zone()
		shift := time.Duration(off) * time.Second
		t = since.Add(shift).Truncate(step).Add(-shift)
	}
	days := int(step / (24 * time.Hour))

	var out []timeTick
	for ; !t.After(now); t = nextTick(t, step, days) {
		if t.Before(since) {
			continue
		}
		label := t.Format("15:04")
		if h, m, _ := t.Clock(); step >= 24*time.Hour || (h == 0 && m == 0) {
			label = t.Format("Jan 2")
		}
		out = append(out, timeTick{at: t, label: label})
	}
	return out
}

// nextTick steps by whole calendar days for day steps, so that ticks stay
// on midnight across daylight-saving changes.
func nextTick(t time.Time, step time.Duration, days int) time.Time {
	if days > 0 {
		return t.AddDate(0, 0, days)
	}
	return t.Add(step)
}

func clampTime(t, lo, hi time.Time) time.Time {
	switch {
	case t.Before(lo):
		return lo
	case t.After(hi):
		return hi
	}
	return t
}
