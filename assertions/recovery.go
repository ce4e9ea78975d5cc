package assertions

import (
	"fmt"

	"github.com/chaosrun/chaosrun/record"
)

// RecoveryMetric selects how long the engine's restart policy took to
// bring back what a host_kill killed, from the kill until it was healthy
// again (record.FaultEvent counts on the revert):
// host_recovery_duration{fault:kill-db}. Tags: fault, host. A kill the
// engine did not recover (no restart policy: the harness started it) has
// no sample, so a check on it fails.
const RecoveryMetric = "host_recovery_duration"

func aggregateRecoveries(run *record.Run, m Metric, agg record.Agg) (result, error) {
	res := result{kind: record.Trend}
	var sum float64
	for _, ev := range run.Faults {
		ms, ok := ev.Counts[record.RecoveryHealthyMs]
		if ev.Action != record.Reverted || ev.Kind != "host_kill" || !ok {
			continue
		}
		tags := map[string]string{"fault": ev.Fault, "host": ev.Target}
		if !matchesTags(m, tags) {
			continue
		}
		v := float64(ms)
		if res.samples == 0 || agg.Func == record.AggMax && v > res.value || agg.Func == record.AggMin && v < res.value {
			res.value = v
		}
		sum += v
		res.samples++
	}
	if res.samples == 0 {
		return res, fmt.Errorf("no host_kill matching %s was recovered by the engine's restart policy (a service without one is started by the harness, and has no recovery to measure)", m)
	}
	switch agg.Func {
	case record.AggMax, record.AggMin:
	case record.AggAvg:
		res.value = sum / float64(res.samples)
	case record.AggCount:
		res.value, res.kind = float64(res.samples), record.Counter
	default:
		return res, fmt.Errorf("%s is not defined for %s (allowed: max, min, avg, count)", agg, RecoveryMetric)
	}
	return res, nil
}

// matchesTags reports whether tags pass m's filters.
func matchesTags(m Metric, tags map[string]string) bool {
	for _, f := range m.Filters {
		v, has := tags[f.Key]
		if f.Not == (has && v == f.Value) {
			return false
		}
	}
	return true
}
