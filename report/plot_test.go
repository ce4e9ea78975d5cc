package report

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/record"
)

var (
	reShadeX = regexp.MustCompile(`<path d="M([0-9.]+),[0-9.]+L([0-9.]+),[^"]*" style="fill:#E54F3B;`)
	reStroke = regexp.MustCompile(`<path d="M[^"]*" style="fill:none;stroke:#([0-9A-F]{6});stroke-width:1.4"`)
	reText   = regexp.MustCompile(`(?s)<text x="([-0-9.]+)"[^>]*>\s*([^<]*?)\s*</text>`)
	reDashed = regexp.MustCompile(`stroke-dasharray`)
)

// ramp is a line rising to top.
func ramp(name string, top float64) Line {
	return Line{Name: name, Points: []Point{{1, 0.001 * top}, {15, top / 2}, {29, top}}}
}

// dataArea returns the left and right x of the one fault's shading, which
// spans the whole run and so the whole data area.
func dataArea(t *testing.T, svg []byte) (left, right float64) {
	t.Helper()
	m := reShadeX.FindSubmatch(svg)
	if m == nil {
		t.Fatalf("no fault shading in %.300s", svg)
	}
	l, _ := strconv.ParseFloat(string(m[1]), 64)
	r, _ := strconv.ParseFloat(string(m[2]), 64)
	return l, r
}

// TestSVGDataAreaAligned: charts of one run with very different Y ranges
// (Y labels from "0" to "1e+06") share the data area's left and right edges.
func TestSVGDataAreaAligned(t *testing.T) {
	charts := []Chart{
		{Title: "small", YLabel: "calls", Lines: []Line{ramp("a", 1)}},
		// the last window's centre lies past the run's end
		{Title: "late", YLabel: "calls", Lines: []Line{{Name: "a", Points: []Point{{0.5, 1}, {30.5, 2}}}}},
		{Title: "huge", YLabel: "req/s", Lines: []Line{ramp("a", 1234567)}},
		{Title: "log", YLabel: "ms", LogY: true, Lines: []Line{ramp("p50", 3), ramp("p99", 20000)}},
		{Title: "legend", YLabel: "x", Lines: []Line{ramp("platform_client_host_ejected dependency=vault,host=127.0.0.1:33897", 7)}},
	}
	fault := []Span{{Name: "all", From: 0, To: 30}}
	var first [2]float64
	for i, c := range charts {
		svg, err := SVG(c, fault, 30)
		if err != nil {
			t.Fatal(err)
		}
		l, r := dataArea(t, svg)
		if i == 0 {
			first = [2]float64{l, r}
			continue
		}
		if [2]float64{l, r} != first {
			t.Errorf("chart %q: data area x %.2f..%.2f, chart %q: %.2f..%.2f", c.Title, l, r, charts[0].Title, first[0], first[1])
		}
	}
}

// TestSVGPaletteAndLegend: eight lines get eight distinct Okabe-Ito
// colours, and every legend label sits right of the data area.
func TestSVGPaletteAndLegend(t *testing.T) {
	var c Chart
	c.Title, c.YLabel = "eight", "req/s"
	for i := 0; i < 8; i++ {
		c.Lines = append(c.Lines, ramp(fmt.Sprintf("bank host_ejected dependency=vault,host=10.0.0.%d:80", i), float64(10*(i+1))))
	}
	svg, err := SVG(c, []Span{{Name: "all", From: 0, To: 30}}, 30)
	if err != nil {
		t.Fatal(err)
	}
	inPalette := map[string]bool{}
	for _, p := range palette {
		inPalette[fmt.Sprintf("%02X%02X%02X", p.R, p.G, p.B)] = true
	}
	seen := map[string]bool{}
	for _, m := range reStroke.FindAllSubmatch(svg, -1) {
		col := string(m[1])
		if !inPalette[col] {
			t.Errorf("line colour #%s is not in the palette", col)
		}
		seen[col] = true
	}
	if len(seen) != 8 {
		t.Errorf("8 lines drawn in %d distinct colours: %v", len(seen), seen)
	}
	_, right := dataArea(t, svg)
	legend := 0
	for _, m := range reText.FindAllSubmatch(svg, -1) {
		if !strings.HasPrefix(string(m[2]), "bank") {
			continue
		}
		legend++
		if x, _ := strconv.ParseFloat(string(m[1]), 64); x <= right {
			t.Errorf("legend %q at x %.2f, inside the data area (right edge %.2f)", m[2], x, right)
		}
	}
	if legend != 8 {
		t.Errorf("%d legend labels, want 8", legend)
	}
	if !strings.Contains(string(svg), "bank · vault 10.0.0.3:80") {
		t.Errorf("legend lacks the readable label %q", "bank · vault 10.0.0.3:80")
	}
}

func TestLegendLabels(t *testing.T) {
	for _, tc := range []struct {
		in, want []string
	}{
		{[]string{"bank host_ejected dependency=vault,host=127.0.0.1:33897"}, []string{"bank · vault 127.0.0.1:33897"}},
		{[]string{"p50", "p99"}, []string{"p50", "p99"}},
		// the metric word is what tells these apart: kept.
		{[]string{"host_ejected dependency=vault", "ejections_total dependency=vault"}, []string{"host_ejected · vault", "ejections_total · vault"}},
		// values alone would collide: the names stay as they are.
		{[]string{"a=x", "b=x"}, []string{"a=x", "b=x"}},
		{[]string{"TransactCash status=500"}, []string{"TransactCash · 500"}},
	} {
		if got := legendLabels(tc.in); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("legendLabels(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestHTMLBoundsAndKeyFigures: base1's verdict "check-p99-isolated" bounds
// p(99) of TransactCheck's latency: its chart draws the bound dashed and
// names it, TransactCash's does not; "check-errors-isolated" bounds a
// failure rate, drawn on the failed share chart; the page has the
// key-figures table.
func TestHTMLBoundsAndKeyFigures(t *testing.T) {
	r, err := record.ReadJSON(context.Background(), filepath.Join("testdata", "runs", "base1.json"))
	if err != nil {
		t.Fatal(err)
	}
	page, err := HTML(r)
	if err != nil {
		t.Fatal(err)
	}
	plots := map[string]string{}
	for _, m := range reFigure.FindAllStringSubmatch(string(page), -1) {
		plots[m[1]] = m[2]
	}
	check := plots["Latency TransactCheck"]
	if !reDashed.MatchString(check) || !strings.Contains(check, "bound: check-p99-isolated") {
		t.Errorf("TransactCheck's latency chart lacks the dashed bound of check-p99-isolated")
	}
	if cash := plots["Latency TransactCash"]; cash == "" || reDashed.MatchString(cash) {
		t.Errorf("TransactCash's latency chart missing or with a bound that is not its own")
	}
	if rate := plots["Request rate"]; reDashed.MatchString(rate) {
		t.Errorf("the rate chart draws a bound")
	}
	// check-errors-isolated bounds TransactCheck's http_req_failed rate:
	// it is drawn on the failed share chart.
	if share := plots[failedShareTitle]; !reDashed.MatchString(share) || !strings.Contains(share, "bound: check-errors-isolated") {
		t.Errorf("the failed share chart lacks the dashed bound of check-errors-isolated")
	}
	html := string(page)
	if m := regexp.MustCompile(`\.plots svg\{[^}]*\}`).FindString(html); !strings.Contains(m, "width:100%") || strings.Contains(m, "max-width") {
		t.Errorf("plots do not take the full content width: %s", m)
	}
	if !strings.Contains(check, `<svg width="793.7pt"`) {
		t.Errorf("plot drawn narrower than 28 cm: %.80s", check)
	}
	i := strings.Index(html, `<table id="key-figures">`)
	if i < 0 {
		t.Fatalf("no key-figures table")
	}
	if !strings.Contains(html[i:], "<tr><td>TransactCheck</td><td>during slow-vault</td>") {
		t.Errorf("key-figures table lacks TransactCheck during slow-vault: %.600s", html[i:])
	}
}
