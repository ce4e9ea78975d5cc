package assertions

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// Live judges a run's abortOnFail checks while load runs, on its windows as
// they arrive, the way k6 judges abortOnFail thresholds: a check may stop
// the run once delayAbortEval of load has passed and it fails. It keeps
// only the windows' series of the metrics those checks read. It is safe
// for concurrent use.
type Live struct {
	mu      sync.Mutex
	parts   int
	checks  []liveCheck
	metrics map[string]bool
	windows []record.Window
	newest  time.Time
	changed chan struct{}
}

// liveCheck is one abortOnFail check, as an assertion of that check alone.
type liveCheck struct {
	def   scenario.Assertion
	delay time.Duration
}

// NewLive watches the abortOnFail checks of defs.
func NewLive(defs []scenario.Assertion) *Live {
	l := &Live{metrics: map[string]bool{}, changed: make(chan struct{}, 1)}
	l.Add(defs)
	return l
}

// Add watches the abortOnFail checks of more assertions (a k6 script's
// thresholds); add them before their windows arrive.
func (l *Live) Add(defs []scenario.Assertion) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range defs {
		for _, c := range d.Checks {
			if !c.AbortOnFail {
				continue
			}
			one := d
			one.Checks = []scenario.Check{c}
			l.checks = append(l.checks, liveCheck{def: one, delay: c.DelayAbortEval.Std()})
			name, _, _ := strings.Cut(d.Metric, "{")
			l.metrics[strings.TrimSpace(name)] = true
		}
	}
}

// SetParts says how many load parts send windows: with one, a second's
// window is whole when it arrives (its engine sends it once the second
// settled), so the newest second is judged too; with several, or not
// known (0), the seconds before the newest.
func (l *Live) SetParts(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.parts = n
}

// Len is how many checks are watched.
func (l *Live) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.checks)
}

// Changed receives a value when a window of a newer second arrived: the
// seconds before it may then be judged.
func (l *Live) Changed() <-chan struct{} { return l.changed }

// Window keeps the series of w that a watched check reads.
func (l *Live) Window(w record.Window) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var kept []record.Series
	for _, s := range w.Series {
		if l.metrics[s.Metric] {
			kept = append(kept, s)
		}
	}
	if len(kept) > 0 {
		i, _ := slices.BinarySearchFunc(l.windows, w.Start, func(a record.Window, t time.Time) int {
			if a.Start.After(t) {
				return 1
			}
			return -1 // after every window of the same start
		})
		l.windows = slices.Insert(l.windows, i, record.Window{Start: w.Start, Series: kept})
	}
	if w.Start.After(l.newest) {
		l.newest = w.Start
		select {
		case l.changed <- struct{}{}:
		default:
		}
	}
}

// Check judges the watched checks over the seconds before the newest one
// (which other load parts may still be filling; with one part, SetParts,
// the newest one too), for a run that started at start with the fault
// events so far. It returns the first failing check whose delayAbortEval
// has passed. A check that cannot be judged yet (its fault not applied,
// no samples so far) does not fail here.
func (l *Live) Check(start time.Time, faults []record.FaultEvent) (record.Verdict, bool) {
	l.mu.Lock()
	end := l.newest
	if l.parts == 1 && !end.IsZero() {
		end = end.Add(time.Second)
	}
	checks := slices.Clone(l.checks)
	var ws []record.Window
	for _, w := range l.windows {
		if w.Start.Before(end) {
			ws = append(ws, w)
		}
	}
	l.mu.Unlock()
	if end.IsZero() || !end.After(start) {
		return record.Verdict{}, false
	}
	run := &record.Run{Start: start, End: end, Faults: faults, Windows: ws}
	for _, c := range checks {
		if end.Sub(start) < c.delay {
			continue
		}
		v := Evaluate(run, []scenario.Assertion{c.def})[0]
		if v.Error == "" && !v.Pass {
			return v, true
		}
	}
	return record.Verdict{}, false
}

// ValidateLiveMetric reports whether sel can be judged while load runs, as
// an abortOnFail check's metric must: k6's results, not the targets'
// /metrics (read after load) or the end-of-run checks.
func ValidateLiveMetric(sel string) error {
	m, err := ParseMetric(sel)
	switch {
	case err != nil:
		return nil // the metric's own check names the problem
	case m.Source == "scrape":
		return fmt.Errorf("abortOnFail: %s is judged after load, from the targets' /metrics; abortOnFail needs a k6 metric", sel)
	case m.Name == EndCheckMetric, m.Name == RecoveryMetric:
		return fmt.Errorf("abortOnFail: %s is known only after load; abortOnFail needs a k6 metric", sel)
	}
	return nil
}
