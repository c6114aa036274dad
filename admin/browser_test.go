package admin

import (
	"context"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "copy the browser test's screenshot to testdata/budget-page.png")

// Bar colours as style.css defines them (--track, --ok, --warn, --alert).
var (
	trackRGB = color.RGBA{0xd9, 0xdf, 0xe9, 0xff}
	fillRGB  = map[string]color.RGBA{
		levelOK:    {0x2f, 0x6f, 0xde, 0xff},
		levelWarn:  {0xe8, 0xa3, 0x17, 0xff},
		levelAlert: {0xd9, 0x3a, 0x3a, 0xff},
	}
)

// chromium finds Debian's chromium (or another Chromium-based browser).
// Without one the test skips locally and fails in CI, where scripts/test.sh
// installs it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed (Debian package chromium); CI must have it")
	}
	t.Skip("chromium is not installed (apt-get install chromium); skipping the browser test")
	return ""
}

// TestBudgetPageInChromium renders the budget page in headless Chromium and
// measures the bars in the screenshot: each bar's filled share of its track
// must match the budget row's spent/total, in the right colour.
func TestBudgetPageInChromium(t *testing.T) {
	browser := chromium(t)

	srv, err := Listen(Config{Addr: "127.0.0.1:0", Source: sampleSource(), Location: time.UTC, Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
		if err := <-done; err != nil {
			t.Error(err)
		}
	})

	dir := t.TempDir()
	shot := filepath.Join(dir, "page.png")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--force-device-scale-factor=1",
		"--user-data-dir="+filepath.Join(dir, "profile"),
		"--screenshot="+shot, "--window-size=1200,900",
		"http://"+srv.Addr()+"/",
	)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}

	img := decodePNG(t, shot)
	if *updateScreenshot {
		copyFile(t, shot, filepath.Join("testdata", "budget-page.png"))
	}
	if b := img.Bounds(); b.Dx() != 1200 {
		t.Fatalf("screenshot is %v, want 1200 px wide", b)
	}

	bars := findBars(img)
	for _, b := range bars {
		t.Logf("bar at y=%d x=%d: %s %d/%d px = %.3f", b.y, b.x, b.level, b.fill, b.width, b.fraction())
	}
	// Table order (see sampleRows): analyst, alice, bob, auditors, carol
	// (unlimited: no bar), dave.
	want := []struct {
		level string
		frac  float64
	}{
		{levelOK, 0.40}, {levelOK, 0.50}, {levelAlert, 0.95}, {levelWarn, 0.80}, {"", 0},
	}
	if len(bars) != len(want) {
		t.Fatalf("found %d bars in the screenshot, want %d (kept at %s)", len(bars), len(want), keep(t, shot))
	}
	for i, w := range want {
		b := bars[i]
		if b.level != w.level {
			t.Errorf("bar %d: colour %q, want %q", i, b.level, w.level)
		}
		// Two pixels of anti-aliasing at the fill's edge on a ~400 px track.
		if math.Abs(b.fraction()-w.frac) > 0.01 {
			t.Errorf("bar %d: filled %.3f of its track, want %.2f", i, b.fraction(), w.frac)
		}
		if b.width < 150 {
			t.Errorf("bar %d is only %d px wide", i, b.width)
		}
		if i > 0 && (b.x != bars[0].x || absInt(b.width-bars[0].width) > 1) {
			t.Errorf("bar %d spans x=%d..%d, bar 0 spans %d..%d: tracks should line up", i, b.x, b.x+b.width, bars[0].x, bars[0].x+bars[0].width)
		}
	}
	// The brief's check in one number: bob's red bar is 0.95/0.50 = 1.9
	// times alice's.
	if ratio := float64(bars[2].fill) / float64(bars[1].fill); math.Abs(ratio-1.9) > 0.05 {
		t.Errorf("bob's bar is %.3f times alice's, want 1.9", ratio)
	}
	if t.Failed() {
		t.Logf("screenshot kept at %s", keep(t, shot))
	}
}

// bar is one budget bar found in the screenshot.
type bar struct {
	x, y  int    // left edge; middle row
	width int    // the whole track, in pixels
	fill  int    // the coloured part, in pixels
	level string // which fill colour; "" for an empty bar
}

func (b bar) fraction() float64 { return float64(b.fill) / float64(b.width) }

// findBars scans the screenshot row by row for runs of bar colours at least
// minBarWidth long, and groups runs with the same left edge and width on
// consecutive rows into one bar at least minBarHeight tall: that rules out
// 1 px table rules and 2 px chart lines. Each bar is measured on its middle
// row, away from the rounded corners.
func findBars(img image.Image) []bar {
	const (
		minBarWidth  = 100
		minBarHeight = 8
	)
	type run struct {
		x, width, fill int
		level          string
	}
	rows := make(map[int][]run)
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; {
			level, ok := barColour(img.At(x, y))
			if !ok {
				x++
				continue
			}
			// A run: bar-coloured pixels, allowing up to two blended ones
			// where the fill meets the track.
			start, fill, fillLevel := x, 0, ""
			end := x
			for gap := 0; x < bounds.Max.X && gap <= 2; x++ {
				level, ok = barColour(img.At(x, y))
				if !ok {
					gap++
					continue
				}
				gap = 0
				end = x + 1
				if level != "" {
					fill++
					fillLevel = level
				}
			}
			x = end
			if end-start >= minBarWidth {
				rows[y] = append(rows[y], run{x: start, width: end - start, fill: fill, level: fillLevel})
			}
		}
	}

	var bars []bar
	used := make(map[[2]int]bool) // (y, x) of runs already in a bar
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for _, r := range rows[y] {
			if used[[2]int{y, r.x}] {
				continue
			}
			// Follow the run down while the next row has one at the same place.
			height := 0
			for yy := y; ; yy++ {
				i := -1
				for j, s := range rows[yy] {
					if absInt(s.x-r.x) <= 1 && absInt(s.width-r.width) <= 2 {
						i = j
					}
				}
				if i < 0 {
					break
				}
				used[[2]int{yy, rows[yy][i].x}] = true
				height++
			}
			if height < minBarHeight {
				continue
			}
			mid := y + height/2
			for _, s := range rows[mid] {
				if absInt(s.x-r.x) <= 1 {
					bars = append(bars, bar{x: s.x, y: mid, width: s.width, fill: s.fill, level: s.level})
					break
				}
			}
		}
	}
	return bars
}

// barColour reports whether c is the track colour (level "") or a fill
// colour (its level), within a small tolerance for colour conversion.
func barColour(c color.Color) (level string, ok bool) {
	if near(c, trackRGB) {
		return "", true
	}
	for l, rgb := range fillRGB {
		if near(c, rgb) {
			return l, true
		}
	}
	return "", false
}

func near(c color.Color, want color.RGBA) bool {
	r, g, b, _ := c.RGBA()
	const tol = 4
	return absInt(int(r>>8)-int(want.R)) <= tol &&
		absInt(int(g>>8)-int(want.G)) <= tol &&
		absInt(int(b>>8)-int(want.B)) <= tol
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("chromium wrote no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode screenshot %s: %v", path, err)
	}
	return img
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// keep copies a failing screenshot out of the test's temp dir so that a
// human can look at it.
func keep(t *testing.T, shot string) string {
	dst := filepath.Join(os.TempDir(), fmt.Sprintf("dpproxy-admin-%d.png", time.Now().UnixNano()))
	if data, err := os.ReadFile(shot); err == nil && os.WriteFile(dst, data, 0o644) == nil {
		return dst
	}
	return shot
}
