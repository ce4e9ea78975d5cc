package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
)

const gamedayScenario = "gameday/testdata/gameday-bank.yaml"

// gameDayProc is a running `chaosrun gameday`.
type gameDayProc struct {
	*background
	url, outDir string
}

// startGameDay starts a game day and waits for its page's URL.
func startGameDay(t *testing.T, args ...string) *gameDayProc {
	t.Helper()
	outDir := t.TempDir()
	cmd := exec.Command(chaosrunBinary(t), append([]string{"gameday", "--out-dir", outDir, "--max-duration", "5m"}, args...)...)
	cmd.Dir = repoRoot(t)
	bg := &background{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = bg.stderr
	so, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`game day page: (\S+)`)
		sc := bufio.NewScanner(so)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		io.Copy(io.Discard, so)
		bg.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-bg.done
		}
	})
	select {
	case u := <-urls:
		return &gameDayProc{background: bg, url: u, outDir: outDir}
	case <-bg.done:
		t.Fatalf("chaosrun gameday ended before serving its page:\n%s", bg.stderr.String())
	case <-time.After(4 * time.Minute): // a first k6 build takes minutes
		t.Fatalf("no game day page within 4m:\n%s", bg.stderr.String())
	}
	return nil
}

func (g *gameDayProc) api(t *testing.T, method, path string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, strings.TrimSuffix(g.url, "/")+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if out != nil {
		json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

// finish stops the game day through the API and returns its record.
func (g *gameDayProc) finish(t *testing.T, scenarioName string) *record.Run {
	t.Helper()
	if code := g.api(t, http.MethodPost, "/api/stop", map[string]string{"by": "the test"}, nil); code != http.StatusAccepted && code != 0 {
		t.Logf("stop answered %d", code)
	}
	g.wait(t, 60*time.Second)
	rec := readRecord(t, filepath.Join(g.outDir, scenarioName+"-gameday", "run.json"))
	checkGameDayExit(t, g, rec)
	return rec
}

// checkGameDayExit fails unless the game day's exit code follows its
// record's verdict: 0 pass, 1 breach, 3 incomplete.
func checkGameDayExit(t *testing.T, g *gameDayProc, rec *record.Run) {
	t.Helper()
	want := exitOK
	switch {
	case rec.Incomplete:
		want = exitRunError
	case !report.Passed(rec):
		want = exitBreach
	}
	if code := g.cmd.ProcessState.ExitCode(); code != want {
		t.Errorf("chaosrun gameday exited %d; its record (incomplete %v, %d verdicts) wants %d\n%s", code, rec.Incomplete, len(rec.Verdicts), want, g.stderr.String())
	}
}

// TestGameDayBrowser drives the page in headless Chromium: it injects the
// slow vault by clicking, sees the cash SLO turn red while the bulkheaded
// check SLO stays green, clears the fault by clicking and sees the cash SLO
// recover; the page gets at least one update a second at full load; the
// record has the manual actions as fault events and nothing is left running.
func TestGameDayBrowser(t *testing.T) {
	skipShort(t)
	br := startBrowser(t)
	g := startGameDay(t, gamedayScenario)
	br.call(t, "Page.navigate", map[string]any{"url": g.url})
	br.waitFor(t, "page connected", `window.gameday && window.gameday.updates() > 0`, 20*time.Second)
	br.eval(t, `document.getElementById('who').value = 'alice'; window.gamedayNoConfirm = true`, nil)

	// The page updates at least once a second under full load.
	var n0, n1 int
	br.eval(t, `window.gameday.updates()`, &n0)
	time.Sleep(5 * time.Second)
	br.eval(t, `window.gameday.updates()`, &n1)
	t.Logf("SSE updates in 5s: %d", n1-n0)
	if n1-n0 < 5 {
		t.Errorf("the page got %d updates in 5s; want at least one a second", n1-n0)
	}
	br.waitFor(t, "both SLOs green before the fault",
		`document.querySelector('#slo-cash-p99').dataset.state == 'green' && document.querySelector('#slo-check-p99').dataset.state == 'green'`, 30*time.Second)

	br.eval(t, `document.getElementById('preset-slow-vault').click()`, nil)
	d := br.waitFor(t, "cash SLO red after injecting the slow vault", `document.querySelector('#slo-cash-p99').dataset.state == 'red'`, 20*time.Second)
	t.Logf("cash-p99 red %s after the click", d.Round(time.Millisecond))
	// The isolated SLO stays green while the fault is in force.
	for range 12 {
		var st string
		br.eval(t, `document.querySelector('#slo-check-p99').dataset.state`, &st)
		if st == "red" {
			t.Errorf("check-p99 turned red while the bulkhead should isolate it")
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	// The vault bulkhead's refusals show on the sheds plot, read live from
	// the bank's /metrics.
	br.waitFor(t, "sheds plotted by reason", `window.gameday.charts['plot-sheds'].data.datasets.some((d) => d.label.includes('vault') && d.data.some((p) => p.y > 0))`, 15*time.Second)
	checkPlots(t, br)
	if shot := os.Getenv("CHAOSRUN_GAMEDAY_SCREENSHOT"); shot != "" {
		br.screenshot(t, shot)
	}
	br.eval(t, `document.getElementById('clear-slow-vault').click()`, nil)
	d = br.waitFor(t, "cash SLO green after clearing", `document.querySelector('#slo-cash-p99').dataset.state == 'green'`, 30*time.Second)
	t.Logf("cash-p99 green again %s after clearing", d.Round(time.Millisecond))
	var timeline string
	br.eval(t, `document.getElementById('timeline').textContent`, &timeline)
	for _, want := range []string{"alice: injected slow-vault", "alice: cleared slow-vault"} {
		if !strings.Contains(timeline, want) {
			t.Errorf("timeline lacks %q:\n%s", want, timeline)
		}
	}
	br.eval(t, `document.getElementById('stop').click()`, nil)
	g.wait(t, 60*time.Second)
	rec := readRecord(t, filepath.Join(g.outDir, "gameday-bank-gameday", "run.json"))
	checkGameDayExit(t, g, rec)
	var applied, reverted bool
	for _, ev := range rec.Faults {
		applied = applied || ev.Action == record.Applied && ev.Detail == "manual by alice"
		reverted = reverted || ev.Action == record.Reverted && ev.Detail == "manual by alice"
	}
	if !applied || !reverted {
		t.Errorf("record's fault events lack alice's inject and clear: %+v", rec.Faults)
	}
	if len(rec.Scrapes) == 0 {
		t.Error("the game day's record holds no /metrics scrapes")
	}
	for _, f := range []string{"report.html", "summary.md", "timeline.json"} {
		if _, err := os.Stat(filepath.Join(g.outDir, "gameday-bank-gameday", f)); err != nil {
			t.Error(err)
		}
	}
	assertNothingLeft(t, rec)
}

// TestGameDayStopCondition: without the bulkhead, the slow vault breaks the
// check SLO (the B of the browser test's A); as a guard it reverts the
// fault by itself within its grace + 2s of breaching. Both engines run a
// game day's load: native (the browser test's too) and k6.
func TestGameDayStopCondition(t *testing.T) {
	skipShort(t)
	for _, tc := range []struct{ file, name, engine string }{
		{gamedayScenario, "gameday-bank", "native"},
		{"gameday/testdata/gameday-bank-k6.yaml", "gameday-bank-k6", "k6"},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			rec := gameDayStopCondition(t, tc.file, tc.name)
			if rec.Versions["engine"] != tc.engine {
				t.Errorf("record's versions %v do not name engine %s", rec.Versions, tc.engine)
			}
		})
	}
}

func gameDayStopCondition(t *testing.T, file, name string) *record.Run {
	g := startGameDay(t, "--set", "bank.bulkheads=off", "--guard", "check-p99", "--grace", "3s", file)
	deadline := time.Now().Add(40 * time.Second)
	for {
		var st struct {
			SLOs []struct{ Assertion, State string }
		}
		g.api(t, http.MethodGet, "/api/state", nil, &st)
		green := 0
		for _, s := range st.SLOs {
			if s.State == "green" {
				green++
			}
		}
		if green == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("SLOs not green before the fault: %+v", st.SLOs)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// Injected from the terminal, as an operator would.
	if out, err := exec.Command(chaosrunBinary(t), "fault", "add", "--gameday", g.url, "--name", "slow-vault", "--kind", "latency",
		"--edge", "bank->vault", "--attr", "latency=2000", "--by", "bob").CombinedOutput(); err != nil {
		t.Fatalf("chaosrun fault add: %v\n%s", err, out)
	}
	var breach, revert time.Time
	deadline = time.Now().Add(45 * time.Second)
	for revert.IsZero() && time.Now().Before(deadline) {
		var st struct {
			Timeline []struct {
				Time     time.Time
				By, What string
			}
		}
		g.api(t, http.MethodGet, "/api/state", nil, &st)
		for _, e := range st.Timeline {
			if breach.IsZero() && strings.HasPrefix(e.What, "guard check-p99 breached") {
				breach = e.Time
			}
			if e.By == "stop condition" && strings.HasPrefix(e.What, "cleared slow-vault") {
				revert = e.Time
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	if breach.IsZero() || revert.IsZero() {
		t.Fatalf("no guard breach and automatic revert within 45s\n%s", g.stderr.String())
	}
	t.Logf("breach → revert: %s (grace 3s)", revert.Sub(breach).Round(time.Millisecond))
	if d := revert.Sub(breach); d < 3*time.Second || d > 5*time.Second {
		t.Errorf("fault reverted %s after the breach; want within grace 3s + 2s, not before the grace", d)
	}
	var list []map[string]any
	g.api(t, http.MethodGet, "/api/faults", nil, &list)
	if len(list) != 0 {
		t.Errorf("faults still in force after the stop condition: %v", list)
	}
	// The terminal client sees the same game day.
	out, err := exec.Command(chaosrunBinary(t), "fault", "list", "--gameday", g.url).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "no faults in force") {
		t.Errorf("chaosrun fault list: %v\n%s", err, out)
	}
	rec := g.finish(t, name)
	var auto bool
	for _, ev := range rec.Faults {
		auto = auto || ev.Action == record.Reverted && strings.Contains(ev.Detail, "stop condition")
	}
	if !auto {
		t.Errorf("record lacks the automatic revert: %+v", rec.Faults)
	}
	assertNothingLeft(t, rec)
	return rec
}

// plotsReady is true when every plot of the page is a drawn chart with
// titled axes that have ticks, a legend, and the fault window shaded.
const plotsReady = `['plot-latency', 'plot-rate', 'plot-errors', 'plot-sheds', 'plot-ejected'].every((id) => {
  const c = window.gameday.charts[id];
  if (!c || !c.chartArea) return false;
  const x = c.scales.x, y = c.scales.y;
  const cv = document.getElementById(id), px = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
  let ink = 0;
  for (let i = 3; i < px.length; i += 4 * 7) if (px[i] > 0) ink++;
  return x.options.title.text === 'seconds of load' && y.options.title.text !== '' && x.ticks.length > 2 && y.ticks.length > 1 &&
    c.legend.legendItems.length > 1 && c.options.plugins.faultShade.spans.some((s) => s.from < x.max) && ink > 500;
})`

// checkPlots checks the plots in the browser: axes with titles and ticks,
// legends (latency's with a p99 line per API beside the sliding p99 of
// all), the fault shaded, pixels drawn.
func checkPlots(t *testing.T, br *browser) {
	t.Helper()
	br.waitFor(t, "plots with axes, legends and fault shading", plotsReady, 10*time.Second)
	var desc string
	br.eval(t, `Object.entries(window.gameday.charts).map(([id, c]) => id + ': x "' + c.scales.x.options.title.text + '" ' +
	  c.scales.x.ticks.length + ' ticks, y "' + c.scales.y.options.title.text + '" ' + c.scales.y.ticks.length + ' ticks, legend [' +
	  c.legend.legendItems.map((l) => l.text).join(', ') + ']').join('\n')`, &desc)
	t.Logf("plots:\n%s", desc)
	// The bank's two APIs have a latency line each, not one line mixing them.
	for _, want := range []string{"p99 TransactCheck", "p99 TransactCash", "p99, all, over the last", "fault in force", "seconds of load", "ms (log scale)"} {
		if !strings.Contains(desc, want) {
			t.Errorf("plots lack %q", want)
		}
	}
	// The slow vault shows on TransactCash's line, not on TransactCheck's.
	var peaks []float64
	br.eval(t, `['p99 TransactCash', 'p99 TransactCheck'].map((l) => Math.max(0, ...window.gameday.charts['plot-latency'].data.datasets.find((d) => d.label === l).data.map((p) => p.y || 0)))`, &peaks)
	if len(peaks) != 2 {
		t.Fatalf("latency peaks per API: %v, want TransactCash's and TransactCheck's", peaks)
	}
	t.Logf("latency peaks per API: TransactCash %v ms, TransactCheck %v ms", peaks[0], peaks[1])
	if peaks[0] < 10*peaks[1] {
		t.Errorf("latency peaks per API (cash, check) %v ms: want cash's at least 10× check's", peaks)
	}
	// Every plot's data area starts at the same x: fault shading lines up.
	var lefts []float64
	br.eval(t, `Object.values(window.gameday.charts).map((c) => Math.round(c.chartArea.left))`, &lefts)
	if slices.Min(lefts) != slices.Max(lefts) {
		t.Errorf("plots' data areas start at x %v; want one x for all", lefts)
	}
}

// TestGameDayCtrlC: Ctrl-C (SIGINT), the ordinary way to end a game day,
// ends it as Stop does: the end checks run, every check is judged (those
// of a fault window n/a, as no fault was injected), and the exit code
// follows the verdict.
func TestGameDayCtrlC(t *testing.T) {
	skipShort(t)
	g := startGameDay(t, "scenarios/bank-slow-vault.yaml") // money-conserved is an end check
	time.Sleep(3 * time.Second)                            // some load to judge
	if err := g.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	g.wait(t, 60*time.Second)
	rec := readRecord(t, filepath.Join(g.outDir, "bank-slow-vault-gameday", "run.json"))
	if rec.Incomplete {
		t.Errorf("Ctrl-C left the record incomplete: %v", rec.Problems)
	}
	if len(rec.EndChecks) == 0 {
		t.Error("no end check ran after Ctrl-C")
	}
	// No fault was injected: the checks of slow-vault's window are n/a,
	// not failed; money-conserved is judged on its end check.
	for _, v := range rec.Verdicts {
		inWindow := strings.HasPrefix(v.Window, "during slow-vault")
		switch {
		case strings.Contains(v.Error, "no end-of-run check"):
			t.Errorf("verdict %s: %s", v.Assertion, v.Error)
		case inWindow != (v.NotApplicable != ""):
			t.Errorf("verdict %s (window %q): n/a %q", v.Assertion, v.Window, v.NotApplicable)
		case !v.Pass:
			t.Errorf("verdict %s failed: %+v", v.Assertion, v)
		}
	}
	checkGameDayExit(t, g, rec)
}
