package gameday

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// stopConditions reverts every fault in force when a guard assertion has
// been red for longer than its grace, as AWS FIS stop conditions do.
type stopConditions struct {
	guards map[string]bool
	grace  time.Duration
	since  map[string]time.Time // guard → when it turned red
}

func newStopConditions(guards []string, grace time.Duration) *stopConditions {
	g := map[string]bool{}
	for _, n := range guards {
		g[n] = true
	}
	return &stopConditions{guards: g, grace: grace, since: map[string]time.Time{}}
}

// check looks at one evaluation at time now and reverts every fault when a
// guard breached for longer than the grace.
func (s *stopConditions) check(ctx context.Context, now time.Time, slos []SLO, c *control) {
	if len(s.guards) == 0 {
		return
	}
	red := map[string]bool{}
	for _, v := range slos {
		if s.guards[v.Assertion] && v.State == Red {
			red[v.Assertion] = true
		}
	}
	var breached []string
	for g := range s.guards {
		if !red[g] {
			if !s.since[g].IsZero() {
				c.note("stop condition", "guard", "guard %s holds again", g)
			}
			delete(s.since, g)
			continue
		}
		if s.since[g].IsZero() {
			s.since[g] = now
			c.noteAt(now, "stop condition", "guard", "guard %s breached; faults are reverted if it lasts %s", g, s.grace)
		}
		if now.Sub(s.since[g]) >= s.grace {
			breached = append(breached, g)
		}
	}
	if len(breached) == 0 || len(c.List()) == 0 {
		return
	}
	sort.Strings(breached)
	why := fmt.Sprintf("guard %s breached for more than %s", strings.Join(breached, ", "), s.grace)
	names, err := c.ClearAll(ctx, "stop condition", why)
	if err != nil {
		c.note("stop condition", "error", "reverting faults after %s: %v", why, err)
	}
	if len(names) > 0 {
		c.note("stop condition", "guard", "%s: reverted every active fault (%s)", why, strings.Join(names, ", "))
	}
}
