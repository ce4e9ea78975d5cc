package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot sizes in points.
const (
	plotWidth  = 15 * vg.Centimeter
	plotHeight = 7 * vg.Centimeter
)

// faultFill shades fault windows; faultInk labels them.
var (
	faultFill = color.NRGBA{R: 230, G: 80, B: 60, A: 60}
	faultInk  = color.NRGBA{R: 170, G: 40, B: 30, A: 255}
)

// SVG draws a chart as an SVG element (no XML prologue, ready to inline in
// HTML), every fault window shaded and labelled with its name. xmax is the
// run's length in seconds: every chart of a run shares the X axis.
func SVG(c Chart, faults []Span, xmax float64) ([]byte, error) {
	p := plot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = "seconds since load start"
	p.Y.Label.Text = c.YLabel
	p.X.Min, p.X.Max = 0, math.Max(xmax, 1)
	p.Legend.Top = true
	p.Legend.Left = false
	p.Add(plotter.NewGrid())
	useSans(p)

	ymin, ymax := yRange(c)
	if c.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	p.Y.Min, p.Y.Max = ymin, ymax

	for _, f := range faults {
		poly, err := plotter.NewPolygon(plotter.XYs{{X: f.From, Y: ymin}, {X: f.To, Y: ymin}, {X: f.To, Y: ymax}, {X: f.From, Y: ymax}})
		if err != nil {
			return nil, fmt.Errorf("report: fault %s: %w", f.Name, err)
		}
		poly.Color = faultFill
		poly.LineStyle.Width = 0
		p.Add(poly)
		lbl, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: f.From, Y: labelY(ymin, ymax, c.LogY)}}, Labels: []string{" " + f.Name}})
		if err != nil {
			return nil, fmt.Errorf("report: fault %s: %w", f.Name, err)
		}
		for i := range lbl.TextStyle {
			lbl.TextStyle[i].Color = faultInk
			lbl.TextStyle[i].Font = font.From(sans, 9)
		}
		p.Add(lbl)
	}
	for i, l := range c.Lines {
		xys := make(plotter.XYs, 0, len(l.Points))
		for _, pt := range l.Points {
			if c.LogY && pt.Y <= 0 {
				continue
			}
			xys = append(xys, plotter.XY{X: pt.X, Y: pt.Y})
		}
		if len(xys) == 0 {
			continue
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("report: %s/%s: %w", c.Title, l.Name, err)
		}
		line.Color = plotutil.Color(i)
		line.Width = vg.Points(1.2)
		p.Add(line)
		p.Legend.Add(l.Name, line)
	}

	cv := vgsvg.New(plotWidth, plotHeight)
	p.Draw(draw.New(cv))
	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("report: draw %s: %w", c.Title, err)
	}
	// Text was measured with Liberation Sans; Arial and Helvetica share
	// its metrics.
	s := strings.ReplaceAll(buf.String(), "font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return []byte(s), nil
}

// sans is the plots' typeface: metric-compatible with the common sans fonts.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// useSans sets every text of p in sans.
func useSans(p *plot.Plot) {
	p.Title.TextStyle.Font = font.From(sans, 11)
	p.X.Label.TextStyle.Font = font.From(sans, 9)
	p.Y.Label.TextStyle.Font = font.From(sans, 9)
	p.X.Tick.Label.Font = font.From(sans, 8)
	p.Y.Tick.Label.Font = font.From(sans, 8)
	p.Legend.TextStyle.Font = font.From(sans, 8)
}

// yRange is the Y axis range: from 0 (or, in log scale, the smallest value
// shown) to a little above the largest, never empty.
func yRange(c Chart) (lo, hi float64) {
	lo, hi = math.Inf(1), 0.0
	for _, l := range c.Lines {
		for _, p := range l.Points {
			if c.LogY && p.Y <= 0 {
				continue
			}
			lo, hi = math.Min(lo, p.Y), math.Max(hi, p.Y)
		}
	}
	if !c.LogY {
		if hi <= 0 {
			hi = 1
		}
		return 0, hi * 1.15
	}
	if math.IsInf(lo, 1) {
		return 0.1, 10
	}
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi*1.5)))
	return lo, hi
}

// labelY places fault labels near the top of the plot.
func labelY(lo, hi float64, logY bool) float64 {
	if logY {
		return math.Pow(10, math.Log10(lo)+0.9*(math.Log10(hi)-math.Log10(lo)))
	}
	return lo + 0.92*(hi-lo)
}
