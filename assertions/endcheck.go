package assertions

import (
	"fmt"

	"github.com/chaosrun/chaosrun/record"
)

// EndCheckMetric selects the end-of-run checks (record.EndChecks):
// end_check_failures{check:money-conserved} counts the matching checks that
// failed (answered ok=false, or could not be called). Tags: check, service.
const EndCheckMetric = "end_check_failures"

func aggregateEndChecks(run *record.Run, m Metric, agg record.Agg) (result, error) {
	var matched, failed int64
	for _, ec := range run.EndChecks {
		tags := map[string]string{"check": ec.Name, "service": ec.Service}
		ok := true
		for _, f := range m.Filters {
			v, has := tags[f.Key]
			if f.Not == (has && v == f.Value) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		matched++
		if !ec.OK {
			failed++
		}
	}
	res := result{samples: matched, kind: record.Counter}
	if matched == 0 {
		return res, fmt.Errorf("no end-of-run check matches %s (the scenario's end_checks name them)", m)
	}
	switch agg.Func {
	case record.AggCount, record.AggSum:
		res.value = float64(failed)
	default:
		return res, fmt.Errorf("%s is not defined for %s (allowed: count, sum)", agg, EndCheckMetric)
	}
	return res, nil
}
