package assertions

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// omissionShare: a load that sends under this share of its rate before
// the faults during one waited for its responses instead of sending on
// time (coordinated omission).
const omissionShare = 0.5

// omissionMin are the whole seconds a fault window and the time before the
// first fault need for their rates to be compared.
const omissionMin = 2

// CoordinatedOmission finds the faults during which a load that may wait
// for its responses sent under half the requests per second it sent
// before the first fault. The native engine's arrivals never wait, and its
// latency counts from each request's intended send time: it is never
// flagged. It marks the latency verdicts in vs whose window overlaps such
// a fault understated and returns a note for each fault, naming the
// executors the script's options name (sc.Workload.Executors) and the
// open-model equivalent.
func CoordinatedOmission(sc *scenario.Scenario, rec *record.Run, vs []record.Verdict) []string {
	first, ok := firstApplied(rec)
	if !ok || sc.Workload.EngineName() == scenario.EngineNative {
		return nil
	}
	before, err := Resolve(rec, Window{Kind: Before, Fault: first}, 0)
	if err != nil || before.Seconds() < omissionMin {
		return nil
	}
	base, err := requestRate(rec, before)
	if err != nil || base <= 0 {
		return nil
	}
	var notes []string
	for _, f := range appliedFaults(rec) {
		during, err := Resolve(rec, Window{Kind: During, Fault: f}, 0)
		if err != nil || during.Seconds() < omissionMin {
			continue
		}
		got, err := requestRate(rec, during)
		if err != nil || got >= omissionShare*base {
			continue
		}
		why := fmt.Sprintf("coordinated omission: the load sent %s requests/s during %s against %s/s before it; latencies there omit the requests it waited to send", rate(got), f, rate(base))
		markUnderstated(vs, rec.Start, during, why)
		notes = append(notes, why+"; "+openModelAdvice(sc.Workload.Executors, base))
	}
	return notes
}

// requestRate is http_reqs per second over rng; no request is 0.
func requestRate(rec *record.Run, rng Range) (float64, error) {
	res, err := aggregateWindows(rec, Metric{Name: "http_reqs"}, rng, record.Agg{Func: record.AggRate})
	if err != nil && res.samples == 0 && rng.Seconds() > 0 {
		return 0, nil
	}
	return res.value, err
}

// appliedFaults names the faults applied in rec, in the order applied.
func appliedFaults(rec *record.Run) []string {
	var out []string
	for _, ev := range rec.Faults {
		if ev.Action == record.Applied && !slices.Contains(out, ev.Fault) {
			out = append(out, ev.Fault)
		}
	}
	return out
}

// markUnderstated marks understated, with why, the latency verdicts in vs
// whose window overlaps rng (offsets count from start).
func markUnderstated(vs []record.Verdict, start time.Time, rng Range, why string) {
	from, to := rng.From.Sub(start), rng.To.Sub(start)
	for i, v := range vs {
		m, err := ParseMetric(v.Metric)
		if err != nil || !record.IsTimeMetric(m.Name) || time.Duration(v.To) <= from || time.Duration(v.From) >= to {
			continue
		}
		if vs[i].Understated == "" {
			vs[i].Understated = why
		}
	}
}

// openModelAdvice names the closed-model executors a script names, or
// k6's default, and the open-model executor that sends on time.
func openModelAdvice(executors []string, base float64) string {
	var closed []string
	for _, e := range executors {
		if !strings.HasSuffix(e, "-arrival-rate") && !slices.Contains(closed, e) {
			closed = append(closed, e)
		}
	}
	open := fmt.Sprintf("executor: 'constant-arrival-rate', rate: %.0f, timeUnit: '1s', with preAllocatedVUs and maxVUs for the slowest response", base)
	switch {
	case len(closed) > 0:
		return fmt.Sprintf("the script's executor %s waits for each response before the next request; send on a schedule instead (%s) or use the native engine", strings.Join(closed, ", "), open)
	case len(executors) > 0:
		return fmt.Sprintf("the script's arrival-rate executor ran out of VUs and dropped iterations; raise its preAllocatedVUs and maxVUs (%s)", open)
	}
	return fmt.Sprintf("the script names no executor, so k6 runs its VUs in a closed loop (constant-vus), each waiting for its response; send on a schedule instead (%s) or use the native engine", open)
}

// rate writes a per-second rate for messages.
func rate(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2g", v)
}
