package arrival

import (
	"fmt"
	"time"
)

// Stage is one stage of k6's ramping-arrival-rate executor: the rate moves
// linearly to Target over Duration.
type Stage struct {
	Target   int    `json:"target"`
	Duration string `json:"duration"`
}

// Scenario is a k6 scenario object for an arrival-rate executor; fields left
// zero are omitted so a script can spread it and add its own (exec, tags, …).
type Scenario struct {
	Executor        string  `json:"executor"`
	StartRate       int     `json:"startRate,omitempty"`
	Rate            int     `json:"rate,omitempty"`
	TimeUnit        string  `json:"timeUnit"`
	Duration        string  `json:"duration,omitempty"`
	StartTime       string  `json:"startTime,omitempty"`
	Stages          []Stage `json:"stages,omitempty"`
	PreAllocatedVUs int     `json:"preAllocatedVUs"`
	MaxVUs          int     `json:"maxVUs"`
}

// VUs says how many VUs an arrival-rate scenario may use; zero fields
// default to peak/10 pre-allocated (at least 1) and four times that at most.
type VUs struct {
	PreAllocated, Max int
}

func (v VUs) resolve(peak int) (int, int) {
	pre, mx := v.PreAllocated, v.Max
	if pre <= 0 {
		pre = max(1, (peak+9)/10)
	}
	if mx <= 0 {
		mx = 4 * pre
	}
	return pre, max(mx, pre)
}

// ramping returns the ramping-arrival-rate scenario of a profile whose
// rates are whole requests per second.
func ramping(p Profile, peak int, vus VUs) Scenario {
	st := make([]Stage, len(p.Segments))
	for i, s := range p.Segments {
		st[i] = Stage{Target: int(s.Rate), Duration: K6Duration(s.Duration)}
	}
	pre, mx := vus.resolve(peak)
	return Scenario{Executor: "ramping-arrival-rate", StartRate: int(p.StartRate), TimeUnit: "1s",
		StartTime: optDur(p.Start), Stages: st, PreAllocatedVUs: pre, MaxVUs: mx}
}

// K6Duration writes d the way k6 reads it: whole seconds as "Ns", else "Nms".
func K6Duration(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return fmt.Sprintf("%dms", d/time.Millisecond)
}

func optDur(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return K6Duration(d)
}
