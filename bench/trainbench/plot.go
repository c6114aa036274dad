package main

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// drawPlot writes accuracy against ε on all rows: the private methods, the
// non-private ceiling, the majority rate and diffprivlib's figures.
func drawPlot(path string, res map[float64]cell, ceiling, majority float64, dpl map[float64]float64) error {
	p := plot.New()
	p.Title.Text = "UCI Adult, all training rows: test accuracy (median)"
	p.X.Label.Text = "ε"
	p.Y.Label.Text = "accuracy"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min, p.Y.Max = 0.5, 0.9
	p.Legend.Top = false
	p.Legend.Left = false
	p.Add(plotter.NewGrid())

	series := []struct {
		name  string
		col   string
		color color.Color
	}{
		{"objective, default λ", colDefault, color.RGBA{R: 31, G: 119, B: 180, A: 255}},
		{"objective, λ auto (private)", colAuto, color.RGBA{R: 44, G: 160, B: 44, A: 255}},
		{"objective, best λ (sweep)", colBest, color.RGBA{R: 148, G: 103, B: 189, A: 255}},
		{"output, default λ", colOutput, color.RGBA{R: 214, G: 39, B: 40, A: 255}},
	}
	for _, s := range series {
		pts := make(plotter.XYs, len(epsilons))
		for i, eps := range epsilons {
			pts[i] = plotter.XY{X: eps, Y: res[eps][s.col]}
		}
		if err := addLine(p, s.name, pts, s.color, false); err != nil {
			return err
		}
	}
	dp := make(plotter.XYs, len(epsilons))
	for i, eps := range epsilons {
		dp[i] = plotter.XY{X: eps, Y: dpl[eps]}
	}
	if err := addLine(p, "diffprivlib (best of 3 λ)", dp, color.Gray{Y: 100}, true); err != nil {
		return err
	}
	for _, h := range []struct {
		name  string
		y     float64
		color color.Color
	}{{"non-private", ceiling, color.Black}, {"majority class", majority, color.Gray{Y: 150}}} {
		pts := plotter.XYs{{X: epsilons[0], Y: h.y}, {X: epsilons[len(epsilons)-1], Y: h.y}}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		l.Color = h.color
		p.Add(l)
		p.Legend.Add(h.name, l)
	}
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

func addLine(p *plot.Plot, name string, pts plotter.XYs, c color.Color, dashed bool) error {
	l, s, err := plotter.NewLinePoints(pts)
	if err != nil {
		return fmt.Errorf("plot %s: %w", name, err)
	}
	l.Color, s.Color = c, c
	if dashed {
		l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	}
	p.Add(l, s)
	p.Legend.Add(name, l, s)
	return nil
}
