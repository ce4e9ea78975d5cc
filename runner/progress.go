package runner

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// progress prints one status line a second: elapsed/total, req/s, p99,
// errors and the faults in force, from the newest complete window; HTTP
// requests and gRPC calls count alike.
type progress struct {
	w         io.Writer
	overwrite bool
	total     time.Duration
	start     time.Time
	active    *activeSet

	mu        sync.Mutex
	last      windowStats
	lastStart time.Time
	seen      bool
	n         int
}

type windowStats struct {
	reqs   int64
	p99    float64
	failed int64
	total  int64
}

func newProgress(w io.Writer, overwrite bool, total time.Duration, active *activeSet) *progress {
	return &progress{w: w, overwrite: overwrite, total: total, active: active}
}

// setStart sets when load started, before run.
func (p *progress) setStart(t time.Time) { p.start = t }

// window takes a window from the results stream.
func (p *progress) window(win record.Window) {
	st := statsOf(win)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.seen && win.Start.Equal(p.lastStart):
		// Another shard's part of the same second.
		p.last.reqs += st.reqs
		p.last.failed += st.failed
		p.last.total += st.total
		p.last.p99 = max(p.last.p99, st.p99)
	case !p.seen || win.Start.After(p.lastStart):
		p.last, p.lastStart, p.seen = st, win.Start, true
	}
}

func statsOf(win record.Window) windowStats {
	var st windowStats
	var hists []string
	for _, s := range win.Series {
		switch s.Metric {
		case "http_reqs":
			st.reqs += int64(s.Sum)
		case "http_req_failed":
			st.failed += s.NonZero
			st.total += s.Count
		case "http_req_duration":
			if s.Hist != "" {
				hists = append(hists, s.Hist)
			}
		case "grpc_req_duration":
			// One sample a gRPC call, status its code: "0" is OK.
			st.reqs += s.Count
			st.total += s.Count
			st.failed += s.GRPCFailures()
			if s.Hist != "" {
				hists = append(hists, s.Hist)
			}
		}
	}
	if len(hists) > 0 {
		all := record.NewHist()
		for _, enc := range hists {
			if h, err := record.DecodeHist(enc); err == nil {
				all.Merge(h)
			}
		}
		st.p99 = float64(all.ValueAtQuantile(99)) / 1000
	}
	return st
}

func (p *progress) run(ctx context.Context) {
	if p.w == nil {
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.print()
		}
	}
}

func (p *progress) line() string {
	p.mu.Lock()
	st, seen := p.last, p.seen
	p.mu.Unlock()
	el := time.Since(p.start).Truncate(time.Second)
	if el > p.total {
		el = p.total
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[%4s/%s]", el, p.total)
	if seen {
		errPct := 0.0
		if st.total > 0 {
			errPct = 100 * float64(st.failed) / float64(st.total)
		}
		fmt.Fprintf(&b, " %5d req/s  p99 %8.1fms  errors %5.1f%%", st.reqs, st.p99, errPct)
	} else {
		b.WriteString(" waiting for the first results window")
	}
	if names := p.active.names(); len(names) > 0 {
		fmt.Fprintf(&b, "  faults: %s", strings.Join(names, ", "))
	} else {
		b.WriteString("  faults: none")
	}
	return b.String()
}

func (p *progress) print() {
	p.n++
	if p.overwrite {
		fmt.Fprintf(p.w, "\r\033[K%s", p.line())
		return
	}
	// Not a terminal: a line every five seconds is enough for a log.
	if p.n%5 == 0 {
		fmt.Fprintln(p.w, p.line())
	}
}

func (p *progress) finish() {
	if p.w != nil && p.overwrite {
		fmt.Fprintf(p.w, "\r\033[K%s\n", p.line())
	}
}
