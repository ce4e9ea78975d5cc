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
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot sizes in points. Every chart of a run shares its data area: a fixed
// gutter on the left holds the Y labels, a strip on the right the legend, so
// the X axes and the fault shading line up from plot to plot.
const (
	plotWidth   = 28 * vg.Centimeter
	plotHeight  = 8 * vg.Centimeter
	yGutter     = 2.2 * vg.Centimeter
	legendStrip = 7 * vg.Centimeter
)

// palette is Okabe and Ito's colour-blind-safe set (black last, for an
// eighth series). faultFill, a light pink band, stays apart from every
// line colour: the lines are saturated, the band pale.
var palette = []color.NRGBA{
	{R: 0, G: 114, B: 178, A: 255},   // blue
	{R: 230, G: 159, B: 0, A: 255},   // orange
	{R: 0, G: 158, B: 115, A: 255},   // bluish green
	{R: 204, G: 121, B: 167, A: 255}, // reddish purple
	{R: 86, G: 180, B: 233, A: 255},  // sky blue
	{R: 213, G: 94, B: 0, A: 255},    // vermillion
	{R: 240, G: 228, B: 66, A: 255},  // yellow
	{R: 0, G: 0, B: 0, A: 255},       // black
}

// faultFill shades fault windows; faultInk labels them; boundInk draws
// assertion bounds.
var (
	faultFill = color.NRGBA{R: 230, G: 80, B: 60, A: 60}
	faultInk  = color.NRGBA{R: 170, G: 40, B: 30, A: 255}
	boundInk  = color.NRGBA{R: 90, G: 90, B: 90, A: 255}
)

// lineColor is series i's colour, distinct for up to len(palette) series.
func lineColor(i int) color.NRGBA { return palette[i%len(palette)] }

// SVG draws a chart as an SVG element (no XML prologue, ready to inline in
// HTML), every fault window shaded and labelled with its name and every
// bound of c drawn dashed. xmax is the run's length in seconds: every chart
// of a run shares the X axis and the data area.
func SVG(c Chart, faults []Span, xmax float64) ([]byte, error) {
	p := plot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = "seconds since load start"
	p.Y.Label.Text = c.YLabel
	p.X.Min, p.X.Max = 0, math.Max(xmax, 1)
	p.Add(plotter.NewGrid())
	useSans(p)

	ymin, ymax := yRange(c)
	if c.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	p.Y.Min, p.Y.Max = ymin, ymax
	if err := addFaults(p, faults, ymin, ymax, c.LogY); err != nil {
		return nil, err
	}
	leg := plot.NewLegend()
	leg.TextStyle.Font = font.From(sans, 8)
	leg.Top, leg.Left = true, true
	if err := addLines(p, &leg, c); err != nil {
		return nil, err
	}
	if err := addBounds(p, &leg, c.Bounds, ymin, ymax); err != nil {
		return nil, err
	}

	// Adding a plotter widens the axes to its data: pin them again, so
	// that every chart of the run spans the same seconds.
	p.X.Min, p.X.Max = 0, math.Max(xmax, 1)
	p.Y.Min, p.Y.Max = ymin, ymax
	cv := vgsvg.New(plotWidth, plotHeight)
	dc := draw.New(cv)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	p.BackgroundColor = nil
	area := draw.Crop(dc, 0, -legendStrip, 0, 0)
	// Shift the plot so that its data area starts at yGutter, whatever
	// the width of this chart's Y labels.
	area = draw.Crop(area, yGutter-p.DataCanvas(area).Min.X, 0, 0, 0)
	p.Draw(area)
	leg.Draw(draw.Crop(dc, plotWidth-legendStrip+6, 0, 0, -18))
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

// addFaults shades every fault window and labels it near the top.
func addFaults(p *plot.Plot, faults []Span, ymin, ymax float64, logY bool) error {
	for _, f := range faults {
		poly, err := plotter.NewPolygon(plotter.XYs{{X: f.From, Y: ymin}, {X: f.To, Y: ymin}, {X: f.To, Y: ymax}, {X: f.From, Y: ymax}})
		if err != nil {
			return fmt.Errorf("report: fault %s: %w", f.Name, err)
		}
		poly.Color = faultFill
		poly.LineStyle.Width = 0
		p.Add(poly)
		lbl, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: f.From, Y: labelY(ymin, ymax, logY)}}, Labels: []string{" " + f.Name}})
		if err != nil {
			return fmt.Errorf("report: fault %s: %w", f.Name, err)
		}
		for i := range lbl.TextStyle {
			lbl.TextStyle[i].Color = faultInk
			lbl.TextStyle[i].Font = font.From(sans, 9)
		}
		p.Add(lbl)
	}
	return nil
}

// addLines draws c's lines, each in its palette colour, with readable
// legend labels.
func addLines(p *plot.Plot, leg *plot.Legend, c Chart) error {
	names := make([]string, len(c.Lines))
	for i, l := range c.Lines {
		names[i] = l.Name
	}
	labels := legendLabels(names)
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
			return fmt.Errorf("report: %s/%s: %w", c.Title, l.Name, err)
		}
		line.Color = lineColor(i)
		line.Width = vg.Points(1.4)
		p.Add(line)
		leg.Add(labels[i], line)
	}
	return nil
}

// addBounds draws every bound inside the Y range as a dashed horizontal
// line, named in the legend.
func addBounds(p *plot.Plot, leg *plot.Legend, bounds []Bound, ymin, ymax float64) error {
	for _, b := range bounds {
		if b.Y < ymin || b.Y > ymax {
			continue
		}
		line, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: b.Y}, {X: p.X.Max, Y: b.Y}})
		if err != nil {
			return fmt.Errorf("report: bound %s: %w", b.Name, err)
		}
		line.Color = boundInk
		line.Width = vg.Points(1)
		line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(line)
		leg.Add("bound: "+b.Name, line)
	}
	return nil
}

// legendLabels makes series names readable: words joined by " · ", a
// label list "k=v,k=v" written as its values, metric words (with an
// underscore) left out when the labels still tell every series apart. A
// name whose readable form would collide with another's stays as it is.
func legendLabels(names []string) []string {
	short, long := make([]string, len(names)), make([]string, len(names))
	for i, n := range names {
		short[i], long[i] = readable(n, true), readable(n, false)
	}
	out := names
	for _, try := range [][]string{long, short} {
		if unique(try) {
			out = try
		}
	}
	return out
}

// readable writes one series name as legendLabels describes.
func readable(name string, dropMetric bool) string {
	var words []string
	for _, w := range strings.Fields(name) {
		switch {
		case strings.Contains(w, "="):
			var vals []string
			for _, kv := range strings.Split(w, ",") {
				_, v, ok := strings.Cut(kv, "=")
				if !ok {
					v = kv
				}
				vals = append(vals, v)
			}
			words = append(words, strings.Join(vals, " "))
		case dropMetric && strings.Contains(w, "_"):
		default:
			words = append(words, w)
		}
	}
	return strings.Join(words, " · ")
}

// unique tells whether every label is non-empty and distinct.
func unique(labels []string) bool {
	seen := map[string]bool{}
	for _, l := range labels {
		if l == "" || seen[l] {
			return false
		}
		seen[l] = true
	}
	return true
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
	for _, b := range c.Bounds {
		if !c.LogY || b.Y > 0 {
			lo, hi = math.Min(lo, b.Y), math.Max(hi, b.Y)
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
