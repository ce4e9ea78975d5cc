package k6run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// Options are the parts of a script's own options (as `k6 inspect` prints
// them, resolved with the script's environment) that say how long it runs
// and how it is judged.
type Options struct {
	// Duration, Iterations, Stages and Scenarios are the script's schedule;
	// all empty for a script with none.
	Duration   string                     `json:"duration"`
	Iterations *int64                     `json:"iterations"`
	Stages     []Stage                    `json:"stages"`
	Scenarios  map[string]json.RawMessage `json:"scenarios"`
	// Thresholds are the script's, by metric key, in key order.
	Thresholds []Threshold `json:"-"`
}

// Stage is one step of a ramping schedule.
type Stage struct {
	Duration string `json:"duration"`
}

// Threshold is one of a script's thresholds: its metric key, the
// expression, and k6's abortOnFail options.
type Threshold struct {
	// Key is the metric with its tags, as the script writes it:
	// http_req_duration{status:200}.
	Key  string
	Expr string
	// AbortOnFail and DelayAbortEval are k6's object form.
	AbortOnFail    bool
	DelayAbortEval time.Duration
}

// OwnSchedule says the script decides how long it runs: it sets a
// duration, iterations, stages or scenarios.
func (o Options) OwnSchedule() bool {
	return o.Duration != "" || o.Iterations != nil || len(o.Stages) > 0 || len(o.Scenarios) > 0
}

// Planned is how long the script's own schedule lasts, when a duration,
// stages or time-bound scenarios say so; ok is false for a schedule of
// iterations (it ends when they are done) or without one.
func (o Options) Planned() (d time.Duration, ok bool) {
	switch {
	case len(o.Scenarios) > 0:
		for _, raw := range o.Scenarios {
			sd, ok := scenarioLength(raw)
			if !ok {
				return 0, false
			}
			d = max(d, sd)
		}
		return d, true
	case len(o.Stages) > 0:
		return stagesLength(o.Stages)
	case o.Duration != "" && o.Iterations == nil:
		d, err := time.ParseDuration(o.Duration)
		return d, err == nil
	}
	return 0, false
}

// scenarioLength is how long one k6 scenario lasts: its start time plus
// its duration or stages; ok is false for iteration executors.
func scenarioLength(raw json.RawMessage) (time.Duration, bool) {
	var sc struct {
		StartTime string  `json:"startTime"`
		Duration  string  `json:"duration"`
		Stages    []Stage `json:"stages"`
	}
	if json.Unmarshal(raw, &sc) != nil {
		return 0, false
	}
	var start time.Duration
	if sc.StartTime != "" {
		var err error
		if start, err = time.ParseDuration(sc.StartTime); err != nil {
			return 0, false
		}
	}
	switch {
	case sc.Duration != "":
		d, err := time.ParseDuration(sc.Duration)
		return start + d, err == nil
	case len(sc.Stages) > 0:
		d, ok := stagesLength(sc.Stages)
		return start + d, ok
	}
	return 0, false
}

func stagesLength(stages []Stage) (time.Duration, bool) {
	var total time.Duration
	for _, s := range stages {
		d, err := time.ParseDuration(s.Duration)
		if err != nil {
			return 0, false
		}
		total += d
	}
	return total, true
}

// ParseOptions reads the options `k6 inspect` prints.
func ParseOptions(b []byte) (Options, error) {
	var o Options
	var raw struct {
		Thresholds map[string][]json.RawMessage `json:"thresholds"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return Options{}, fmt.Errorf("k6 options: %w", err)
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Options{}, fmt.Errorf("k6 options: %w", err)
	}
	keys := make([]string, 0, len(raw.Thresholds))
	for k := range raw.Thresholds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for i, item := range raw.Thresholds[k] {
			t, err := parseThreshold(item)
			if err != nil {
				return Options{}, fmt.Errorf("k6 options: threshold %s[%d]: %w", k, i, err)
			}
			t.Key = k
			o.Thresholds = append(o.Thresholds, t)
		}
	}
	return o, nil
}

// parseThreshold reads a threshold as a string or k6's object form.
func parseThreshold(item json.RawMessage) (Threshold, error) {
	var t Threshold
	if json.Unmarshal(item, &t.Expr) == nil {
		return t, nil
	}
	var obj struct {
		Threshold      string `json:"threshold"`
		AbortOnFail    bool   `json:"abortOnFail"`
		DelayAbortEval string `json:"delayAbortEval"`
	}
	if err := json.Unmarshal(item, &obj); err != nil {
		return t, fmt.Errorf("want a string or {threshold, abortOnFail, delayAbortEval}: %w", err)
	}
	t.Expr, t.AbortOnFail = obj.Threshold, obj.AbortOnFail
	if obj.DelayAbortEval != "" {
		d, err := time.ParseDuration(obj.DelayAbortEval)
		if err != nil {
			return t, fmt.Errorf("delayAbortEval %q: %w", obj.DelayAbortEval, err)
		}
		t.DelayAbortEval = d
	}
	return t, nil
}

// Inspect reads a script's own options with `k6 inspect`, its environment
// given as -e flags as `k6 run` would.
func Inspect(ctx context.Context, binary, script string, env map[string]string) (Options, error) {
	args := []string{"inspect", "--no-color"}
	for _, k := range sortedKeys(env) {
		args = append(args, "-e", k+"="+env[k])
	}
	cmd := exec.CommandContext(ctx, binary, append(args, script)...)
	cmd.Env = append(os.Environ(), "K6_NO_USAGE_REPORT=true")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) && msg != "" {
			return Options{}, fmt.Errorf("k6 inspect %s: %s", script, msg)
		}
		return Options{}, fmt.Errorf("k6 inspect %s: %w", script, err)
	}
	return ParseOptions(stdout.Bytes())
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
