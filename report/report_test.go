package report

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/internal/testenv"
	"github.com/chaosrun/chaosrun/record"
)

// breachRun is a recorded run with one breached check, one that could not
// be evaluated, a problem and a fault not applied: every branch of the
// renderers.
func breachRun(t *testing.T) *record.Run {
	r := recorded(t, "base2")
	r.Verdicts = append(r.Verdicts, record.Verdict{Assertion: "cash-fast", Check: "p(99) < 100ms", Metric: "http_req_duration{api:Nope}",
		Window: "during slow-vault", Error: "no samples of http_req_duration{api:Nope} in during slow-vault"})
	r.Problems = []string{"k6: 3 dropped iterations <&>"}
	r.NotApplied = []record.NotApplied{lateVault}
	return r
}

// lateVault is a fault planned after load ended.
var lateVault = record.NotApplied{Fault: "late-vault", Kind: "latency", Target: "bank->vault", Start: record.Duration(50 * time.Second),
	Reason: "load ended after 30.012s, before its start"}

// TestNotAppliedInEveryReport: a fault not applied is in every report
// WriteAll writes, with its name, its planned start and why.
func TestNotAppliedInEveryReport(t *testing.T) {
	dir := t.TempDir()
	if err := WriteAll(dir, breachRun(t)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file string
		want []string
	}{
		{"run.json", []string{`"not_applied":[{"fault":"late-vault","kind":"latency","target":"bank-\u003evault","start":"50s","reason":"load ended after 30.012s, before its start"}]`}},
		{"summary.md", []string{"| late-vault | latency | bank->vault | not applied: load ended after 30.012s, before its start | +50s | - | - |"}},
		{"report.html", []string{"<td>late-vault</td><td>latency</td><td>bank-&gt;vault</td><td>not applied</td><td>&#43;50s</td><td>-</td><td>load ended after 30.012s, before its start</td>"}},
		{"junit.xml", []string{`<testcase name="fault late-vault"`, `<skipped message="fault late-vault (latency on bank-&gt;vault, planned at +50s): load ended after 30.012s, before its start" type="not applied">`}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("%s lacks %s", tc.file, w)
				}
			}
		})
	}
}

// TestLazyRecordReportsTheSame: a record opened without its windows, read
// from its file as asked, makes the same summary as one read whole.
func TestLazyRecordReportsTheSame(t *testing.T) {
	lazy, err := record.OpenJSON(filepath.Join("testdata", "runs", "base1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if Markdown(lazy) != Markdown(recorded(t, "base1")) {
		t.Error("Markdown of the lazily read record differs")
	}
}

func TestMarkdownGolden(t *testing.T) {
	base, head := recorded(t, "base1"), recorded(t, "halved1")
	golden(t, "base1.md", []byte(Markdown(base)))
	breach := Markdown(breachRun(t))
	golden(t, "breach.md", []byte(breach))
	if !strings.Contains(breach, "| late-vault | latency | bank->vault | not applied: ") {
		t.Errorf("breach.md does not list the fault not applied:\n%s", breach)
	}
	d, err := Compare([]*record.Run{base}, []*record.Run{head}, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.md", []byte(Summary([]*record.Run{head, breachRun(t)}, d)))
	var tab bytes.Buffer
	d.Table(&tab, true)
	golden(t, "diff.txt", tab.Bytes())
}

func TestJUnitGolden(t *testing.T) {
	inc := recorded(t, "base3")
	inc.Incomplete, inc.Problems = true, []string{"interrupted"}
	b, err := JUnit([]*record.Run{recorded(t, "base1"), breachRun(t), inc})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "junit.xml", b)
	for _, want := range []string{`tests="9" failures="1" errors="2"`, `tests="4" failures="1" errors="1" skipped="1"`, `<skipped message="fault late-vault (latency on bank-&gt;vault, planned at +50s)`, `<failure message="observed 61.7ms, bound 4.25ms (check p(99) &lt; 1.5 * baseline) over http_req_duration{api:TransactCheck} during slow-vault +2s settle [+12.004s, +20.003s), 700 samples" type="breach">`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("junit lacks %s", want)
		}
	}
	validateJUnit(t, b)
}

// needTool finds an external program: a test that needs it fails in CI
// (env CI=true) when it is missing and skips elsewhere.
func needTool(t *testing.T, name, pkg string) string {
	t.Helper()
	return testenv.Tool(t, name, pkg)
}

// validateJUnit checks b against testdata/junit.xsd with xmllint.
func validateJUnit(t *testing.T, b []byte) {
	t.Helper()
	xmllint := needTool(t, "xmllint", "libxml2-utils")
	p := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("testdata", "junit.xsd"), p).CombinedOutput()
	if err != nil {
		t.Fatalf("JUnit XML does not validate: %v\n%s", err, out)
	}
}

// TestJUnitSchemaRejects makes sure the validation can fail.
func TestJUnitSchemaRejects(t *testing.T) {
	xmllint := needTool(t, "xmllint", "libxml2-utils")
	p := filepath.Join(t.TempDir(), "bad.xml")
	os.WriteFile(p, []byte(`<testsuites><testsuite name="x" tests="1"><testcase/></testsuite></testsuites>`), 0o644)
	if out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("testdata", "junit.xsd"), p).CombinedOutput(); err == nil {
		t.Fatalf("a suite without failures/errors and a case without name validated:\n%s", out)
	}
}

var (
	reID     = regexp.MustCompile(`\sid="([^"]+)"`)
	reHead   = regexp.MustCompile(`<h[12][^>]*>([^<]*)</h[12]>`)
	reFigure = regexp.MustCompile(`(?s)<figure class="plot" data-title="([^"]*)">(.*?)</figure>`)
	reShade  = regexp.MustCompile(`<path [^>]*style="fill:#E54F3B;fill-opacity:`)
	reLabel  = regexp.MustCompile(`(?s)<text[^>]*fill:#AA281E">\s*([^<]*)</text>`)
	reRow    = regexp.MustCompile(`<tr><td class="(pass|fail)">`)
	reFaults = regexp.MustCompile(`(?s)<h2>Fault timeline</h2>.*?</table>`)
	reFault  = regexp.MustCompile(`<tr><td>([^<]*)</td><td>[^<]*</td><td>[^<]*</td><td>([^<]*)</td><td>([^<]*)</td>`)
	reRemote = regexp.MustCompile(`(?i)(src|href)="(https?:)?//|@import|url\(`)
)

// htmlOutline is the structure of a report page: ids, headings, verdict rows
// and per plot its title, shaded fault windows and their labels.
func htmlOutline(t *testing.T, page []byte) string {
	t.Helper()
	s := string(page)
	var b strings.Builder
	for _, m := range reID.FindAllStringSubmatch(s, -1) {
		fmt.Fprintf(&b, "id %s\n", m[1])
	}
	for _, m := range reHead.FindAllStringSubmatch(s, -1) {
		fmt.Fprintf(&b, "heading %s\n", m[1])
	}
	for _, m := range reRow.FindAllStringSubmatch(s, -1) {
		fmt.Fprintf(&b, "row %s\n", m[1])
	}
	for _, m := range reFault.FindAllStringSubmatch(reFaults.FindString(s), -1) {
		fmt.Fprintf(&b, "fault %s %s at %s\n", m[1], m[2], m[3])
	}
	for _, m := range reFigure.FindAllStringSubmatch(s, -1) {
		var labels []string
		for _, l := range reLabel.FindAllStringSubmatch(m[2], -1) {
			labels = append(labels, strings.TrimSpace(l[1]))
		}
		fmt.Fprintf(&b, "plot %q: svg %v, shaded %d, labels %v\n", m[1], strings.HasPrefix(m[2], "<svg"), len(reShade.FindAllString(m[2], -1)), labels)
	}
	if reRemote.MatchString(s) {
		t.Errorf("the page loads something at view time: %s", reRemote.FindString(s))
	}
	return b.String()
}

func TestHTMLGolden(t *testing.T) {
	page, err := HTML(recorded(t, "base1"))
	if err != nil {
		t.Fatal(err)
	}
	out := htmlOutline(t, page)
	golden(t, "base1.html.outline", []byte(out))
	breach, err := HTML(breachRun(t))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "breach.html.outline", []byte(htmlOutline(t, breach)))
	// Every plot shades and labels the one fault.
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "plot ") && !strings.Contains(line, "shaded 1, labels [slow-vault]") {
			t.Errorf("plot without its fault window: %s", line)
		}
	}
	idx, err := IndexHTML([]IndexEntry{{recorded(t, "base1"), "bank-slow-vault/report.html"}, {breachRun(t), "breach/report.html"}})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "index.html", idx)
}

// TestHTMLChromium renders a report in headless Chromium and checks the
// screenshot: the page loads and the shaded fault windows are on screen; the
// same run without its fault events shows no shade (the check can fail).
func TestHTMLChromium(t *testing.T) {
	chromium := needTool(t, "chromium", "chromium")
	withFault := recorded(t, "base1")
	noFault := recorded(t, "base1")
	noFault.Faults = nil
	// Anti-aliased red lines give a few shade-coloured pixels: the bands
	// give ten times as many.
	with, without := shadedPixels(t, chromium, withFault), shadedPixels(t, chromium, noFault)
	t.Logf("shade-coloured pixels: %d with the fault, %d without", with, without)
	if with < 20000 || with < 10*without {
		t.Errorf("screenshot shows %d shaded pixels (%d without faults); the fault windows are not drawn", with, without)
	}
}

// shadedPixels screenshots r's report and counts the pixels of the fault
// shade: #E54F3B at 23.5% over white, about (249, 222, 219).
func shadedPixels(t *testing.T, chromium string, r *record.Run) int {
	t.Helper()
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := WriteHTML(page, r); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "shot.png")
	cmd := exec.CommandContext(t.Context(), chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1000,1800", "--screenshot="+shot, "file://"+page)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	if keep := os.Getenv("CHAOSRUN_KEEP_SCREENSHOT"); keep != "" && len(r.Faults) > 0 {
		b, _ := os.ReadFile(shot)
		os.WriteFile(keep, b, 0o644)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, out)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	shaded := 0
	bnd := img.Bounds()
	for y := bnd.Min.Y; y < bnd.Max.Y; y++ {
		for x := bnd.Min.X; x < bnd.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			r, g, b = r>>8, g>>8, b>>8
			if r > 240 && g > 205 && g < 235 && b > 200 && b < 232 && r-g > 15 {
				shaded++
			}
		}
	}
	return shaded
}

// TestNotApplicableInEveryReport: a check with nothing to judge is n/a in
// every report, passes, and is counted in the headline.
func TestNotApplicableInEveryReport(t *testing.T) {
	r := &record.Run{Scenario: "day", Verdicts: []record.Verdict{
		{Assertion: "fast", Check: "p(99) < 1s", Window: "whole", Pass: true, Samples: 10, Observed: 5, Bound: 1000, Unit: "ms"},
		{Assertion: "cash-fails-fast", Check: "p(99) < 100ms", Window: "during slow-vault (no fault injected)", Pass: true,
			NotApplicable: "its window is during slow-vault, and no fault was injected"}}}
	if h := Headline(r); h != "PASS (2 checks, 1 of them n/a)" || !Passed(r) {
		t.Errorf("headline %q, passed %v", h, Passed(r))
	}
	dir := t.TempDir()
	if err := WriteAll(dir, r); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		"summary.md":  "| n/a | cash-fails-fast |",
		"report.html": "<td class=\"pass\">n/a</td><td>cash-fails-fast</td>",
		"junit.xml":   `<skipped message="its window is during slow-vault, and no fault was injected" type="not applicable">`,
		"run.json":    `"not_applicable":"its window is during slow-vault, and no fault was injected"`,
	} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s:\n%s", file, want, b)
		}
	}
}

func TestNum(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		unit string
		want string
	}{
		{4654, "ms", "4654ms"},
		{20000, "ms", "20000ms"},
		{123456.5, "ms", "123456.50ms"},
		{0.01, "", "0.01"},
		{0.001664, "", "0.001664"},
	} {
		if got := num(tc.x, tc.unit); got != tc.want {
			t.Errorf("num(%g, %q) = %q, want %q", tc.x, tc.unit, got, tc.want)
		}
	}
}

// TestUnderstatedInEveryReport: a latency a closed-model load understated
// is a floor in every report: its figure reads ≥ and the reason is there.
func TestUnderstatedInEveryReport(t *testing.T) {
	const why = "coordinated omission: the load sent 1.5 requests/s during slow-origin against 5730/s before it"
	r := &record.Run{Scenario: "closed", Verdicts: []record.Verdict{
		{Assertion: "fast", Check: "p(95) < 200", Window: "all", Pass: true, Samples: 10, Observed: 0.18, Bound: 200, Unit: "ms", Understated: why}}}
	var table strings.Builder
	Table(&table, r)
	dir := t.TempDir()
	if err := WriteAll(dir, r); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{"table": table.String()}
	for _, f := range []string{"summary.md", "report.html", "run.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		got[f] = string(b)
	}
	for file, want := range map[string][]string{
		"table":       {"≥0.18ms", "fast: understated (≥): " + why},
		"summary.md":  {"| ≥0.18ms |", "**fast** understated (≥): " + why},
		"report.html": {"<td>≥0.18ms</td>", "understated (≥): " + why},
		"run.json":    {`"understated":"` + why + `"`},
	} {
		for _, w := range want {
			if !strings.Contains(got[file], w) {
				t.Errorf("%s lacks %s:\n%s", file, w, got[file])
			}
		}
	}
}

// TestFaultEffectsInEveryReport: what each fault moved, or that it moved
// nothing, is in the table, the Markdown and the HTML.
func TestFaultEffectsInEveryReport(t *testing.T) {
	r := &record.Run{Scenario: "effects", FaultEffects: []record.FaultEffect{
		{Fault: "slow-vault", Compared: 12, Moved: []string{"http_req_duration{api:TransactCash} 1.2→2004"}},
		{Fault: "slow-spare", Compared: 12},
		{Fault: "blip", Unjudged: "too short to tell noise: 20s before the first fault and 3s during it (need 6s each)"}}}
	want := []string{"slow-vault moved http_req_duration{api:TransactCash} 1.2→2004 (of 12 series)",
		"slow-spare moved none of 12 observed series beyond run-to-run noise", "blip not judged: too short to tell noise"}
	var table strings.Builder
	Table(&table, r)
	page, err := HTML(r)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"table": table.String(), "summary.md": Markdown(r), "report.html": string(page)} {
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s lacks %q", name, w)
			}
		}
	}
}
