package faults

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/chaosrun/chaosrun/clock"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// ApplySchedule runs a scenario's fault schedule against the Toxiproxy API
// at api, whose proxies exist already (what the Kubernetes export's fault
// Job does): it waits up to wait for the scenario's proxies, sets the
// schedule's zero delay after they are ready (told to ready), applies and
// reverts each fault on time, and reverts what is in force when ctx ends.
// emit sees every event; failed counts the actions that failed.
func ApplySchedule(ctx context.Context, api string, sc *scenario.Scenario, delay, wait time.Duration,
	ready func(start time.Time, proxies []string), emit func(record.FaultEvent)) (failed int, err error) {
	zero := func(context.Context) (time.Time, error) { return time.Now().Add(delay), nil }
	return ApplyScheduleFrom(ctx, api, sc, zero, wait, ready, emit)
}

// ApplyScheduleFrom is ApplySchedule with the schedule's zero given by
// zero, asked once the proxies are ready (a judge's load start, say).
func ApplyScheduleFrom(ctx context.Context, api string, sc *scenario.Scenario, zero func(context.Context) (time.Time, error), wait time.Duration,
	ready func(start time.Time, proxies []string), emit func(record.FaultEvent)) (failed int, err error) {
	var proxies []string
	for _, e := range sc.Edges() {
		proxies = append(proxies, e.Proxy)
	}
	wctx, cancel := context.WithTimeoutCause(ctx, wait, fmt.Errorf("not ready within %s", wait))
	err = WaitForProxies(wctx, api, proxies, 500*time.Millisecond)
	cancel()
	if err != nil {
		if u, perr := url.Parse(api); perr == nil {
			api = u.Redacted()
		}
		return 0, fmt.Errorf("%s: %w", api, err)
	}
	start, err := zero(ctx)
	if err != nil {
		return 0, err
	}
	ready(start, proxies)
	env := &ScenarioEnv{Scenario: sc, API: NewToxiproxyAPI(api)}
	err = Run(ctx, clock.Real{}, start, sc.Faults, env, func(ev record.FaultEvent) {
		if ev.Action == record.Failed {
			failed++
		}
		emit(ev)
	})
	return failed, err
}
