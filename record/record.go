// Package record defines the run record: everything one scenario run observed,
// on one clock, in a form that assertions and reports read without touching the
// testbed, k6 or the targets.
package record

import (
	"time"
)

// SchemaVersion is the version of the run record's JSON layout.
const SchemaVersion = 1

// Run is the record of one scenario run.
type Run struct {
	// SchemaVersion is the version of the record's layout (SchemaVersion).
	SchemaVersion int `json:"schema_version"`
	// Scenario is the scenario's name.
	Scenario string `json:"scenario"`
	// File is the scenario file the run came from.
	File string `json:"file,omitempty"`
	// Seed seeds every random choice of the run (keys, jitter): it replays the run.
	Seed int64 `json:"seed"`
	// Testbed is where the services ran (local, docker, …).
	Testbed string `json:"testbed"`
	// Versions are the versions of chaosrun, k6 (with the extension build) and the like.
	Versions map[string]string `json:"versions,omitempty"`
	// Overrides are the --set key=value overrides applied to the scenario.
	Overrides []string `json:"overrides,omitempty"`
	// Start is when load started: offsets in the record count from here.
	Start time.Time `json:"start"`
	// End is when load ended.
	End time.Time `json:"end"`
	// Planned is the scenario's load duration.
	Planned Duration `json:"planned"`
	// Windows are the run's windows when they are held in memory (a record
	// read from its file). A live run's record leaves it empty and reads
	// them from Source: use EachWindow.
	Windows []Window `json:"windows"`
	// Source, when set, holds the windows instead of Windows (a live run's
	// window log on disk, so that memory stays flat in run length).
	Source WindowSource `json:"-"`
	// Faults is the fault timeline, with real times.
	Faults []FaultEvent `json:"faults"`
	// Scrapes are the instances' /metrics, read about once a second.
	Scrapes []Scrape `json:"scrapes,omitempty"`
	// FaultEffects say, for each fault applied, which observed series
	// moved beyond run-to-run noise while it was in force.
	FaultEffects []FaultEffect `json:"fault_effects,omitempty"`
	// Verdicts are the outcomes of the checks, one per check.
	Verdicts []Verdict `json:"verdicts,omitempty"`
	// EndChecks are the services' own checks, called after load.
	EndChecks []EndCheck `json:"end_checks,omitempty"`
	// Timings break the run's wall time into its stages.
	Timings Timings `json:"timings"`
	// Incomplete says the run did not finish (interrupted, a part died):
	// its verdicts are then not a pass.
	Incomplete bool `json:"incomplete,omitempty"`
	// Problems say what went wrong, in words.
	Problems []string `json:"problems,omitempty"`
	// Topology lists the started service instances.
	Topology []ServiceInfo `json:"topology,omitempty"`
	// Aborted says why an abortOnFail check stopped the run before its
	// planned end; empty when none did. An aborted run does not pass.
	Aborted string `json:"aborted,omitempty"`
	// NotApplied are the scheduled faults that never took effect because
	// load ended (or the run was aborted) before their start.
	NotApplied []NotApplied `json:"not_applied,omitempty"`
	// LoadParts say how each load process ended (k6: its exit code and
	// whether its own thresholds were crossed).
	LoadParts []LoadPart `json:"load_parts,omitempty"`
	// ScriptChecks are the load's own checks (a k6 script's thresholds),
	// judged beside the scenario's assertions (verdicts of source script).
	ScriptChecks []ScriptCheck `json:"script_checks,omitempty"`
}

// WindowSource yields a run's windows in start order.
type WindowSource interface {
	EachWindow(f func(Window) error) error
}

// EachWindow calls f with each window in start order, from Source when
// set, else from Windows; it stops at f's first error.
func (r *Run) EachWindow(f func(Window) error) error {
	if r.Source != nil {
		return r.Source.EachWindow(f)
	}
	for _, w := range r.Windows {
		if err := f(w); err != nil {
			return err
		}
	}
	return nil
}

// Close frees the run's window source, when it holds anything (a file).
func (r *Run) Close() error {
	if c, ok := r.Source.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// Timings breaks a run's wall time into its stages.
type Timings struct {
	Build    Duration `json:"build"`
	Startup  Duration `json:"startup"`
	Load     Duration `json:"load"`
	Teardown Duration `json:"teardown"`
}

// ServiceInfo names one started service instance and where it listened.
type ServiceInfo struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	PID     int    `json:"pid,omitempty"`
	// Proxies map each dependency edge to its proxy's listen address.
	Proxies map[string]string `json:"proxies,omitempty"`
}

// Kind is the type of a k6 metric.
type Kind string

// The k6 metric kinds.
const (
	Trend   Kind = "trend"
	Counter Kind = "counter"
	Rate    Kind = "rate"
	Gauge   Kind = "gauge"
)

// Window holds every series observed in one second of the run.
type Window struct {
	// Start is the first instant of the window (whole seconds, wall clock).
	Start time.Time `json:"start"`
	// Series are the window's metrics, one per metric and tag set.
	Series []Series `json:"series"`
}

// Series is one metric with one tag set, aggregated over a window.
//
// Trend: Count samples, Sum/Min/Max of their values (k6 units: ms for
// durations), Hist an HDR histogram of the values in microunits (value×1000).
// Counter: Sum is the total added, Count the number of samples.
// Rate: Count samples, NonZero of them non-zero.
// Gauge: Min, Max and Last value seen.
//
// Its JSON form is, field for field, that of a series in the results
// stream (wire.Series, in the shared models module).
type Series struct {
	// Metric is the k6 metric's name.
	Metric string `json:"metric"`
	// Kind is the metric's type: what the values below mean.
	Kind Kind `json:"kind"`
	// Tags are the tags that matter (scenario, api, status, …), never a raw URL.
	Tags    map[string]string `json:"tags,omitempty"`
	Count   int64             `json:"count"`
	Sum     float64           `json:"sum,omitempty"`
	Min     float64           `json:"min,omitempty"`
	Max     float64           `json:"max,omitempty"`
	Last    float64           `json:"last,omitempty"`
	NonZero int64             `json:"nonzero,omitempty"`
	// Hist is an HDR histogram in its compressed, base64 encoding
	// (hdrhistogram-go Encode(V2CompressedEncodingCookieBase)).
	Hist string `json:"hist,omitempty"`
}

// GRPCFailures is how many of s's samples are failed gRPC calls: every
// sample of a grpc_req_duration series whose status (the code's number)
// is not "0", OK; none of any other series.
func (s Series) GRPCFailures() int64 {
	if s.Metric != "grpc_req_duration" || s.Tags["status"] == "0" {
		return 0
	}
	return s.Count
}

// FaultAction is what happened to a fault at an instant.
type FaultAction string

// Fault actions.
const (
	Applied  FaultAction = "applied"
	Reverted FaultAction = "reverted"
	Failed   FaultAction = "failed"
)

// FaultEvent records a fault being applied or reverted, with the time it was
// scheduled for and the time it really took effect.
type FaultEvent struct {
	// Fault is the fault's name in the scenario.
	Fault string `json:"fault"`
	// Kind is the fault's kind (latency, stop, …).
	Kind string `json:"kind"`
	// Target is the edge (a->b) or host the fault acts on.
	Target string `json:"target"`
	// Action is what happened: applied, reverted or failed.
	Action FaultAction `json:"action"`
	// Scheduled is when the schedule asked for the action.
	Scheduled time.Time `json:"scheduled"`
	// Actual is when the action took effect.
	Actual time.Time `json:"actual"`
	Error  string    `json:"error,omitempty"`
	// Detail says what was done ("latency 2000ms downstream on bank->vault").
	Detail string `json:"detail,omitempty"`
	// Counts are what the fault counted while in force (HTTP faults:
	// seen, matched and affected requests), on its revert event.
	Counts map[string]int64 `json:"counts,omitempty"`
}

// The counts a host_kill's revert event carries when the engine's restart
// policy brought its instances back: how many, and the longest time from
// the kill until one ran again and until it was healthy.
const (
	RecoveryRestarts  = "engine_restarts"
	RecoveryRunningMs = "restart_ms"
	RecoveryHealthyMs = "recovery_ms"
)

// EndCheck is the answer of a service's own check (money conserved,
// say), called after load and before teardown.
type EndCheck struct {
	Name    string             `json:"name"`
	Service string             `json:"service"`
	OK      bool               `json:"ok"`
	Detail  string             `json:"detail,omitempty"`
	Values  map[string]float64 `json:"values,omitempty"`
	Error   string             `json:"error,omitempty"`
}

// Scrape is one reading of a target's /metrics.
type Scrape struct {
	Time time.Time `json:"time"`
	// Instance is the service instance's name.
	Instance string `json:"instance"`
	// Values map name{label=value,...} to the sample's value.
	Values map[string]float64 `json:"values"`
}

// FaultEffect says what moved while a fault was in force, against the
// time before the first fault (assertions.FaultEffects).
type FaultEffect struct {
	Fault string `json:"fault"`
	// Compared counts the observed series held against the time before.
	Compared int `json:"compared"`
	// Moved names the series that moved beyond run-to-run noise, largest
	// relative change first ("http_req_duration{api:Cash} 1.2→2004",
	// medians of 2-second blocks); empty when nothing moved.
	Moved []string `json:"moved,omitempty"`
	// Unjudged says why nothing was compared (a window too short).
	Unjudged string `json:"unjudged,omitempty"`
}

// Verdict is the outcome of one assertion check.
type Verdict struct {
	// Assertion is the assertion's name.
	Assertion string `json:"assertion"`
	// Check is the check as written ("p(99) < 1.5 * baseline").
	Check string `json:"check"`
	// Metric is the metric selector.
	Metric string `json:"metric"`
	// Window is the resolved window ("during slow-vault +2s settle").
	Window string `json:"window"`
	// From and To are the window's offsets from the run's start.
	From Duration `json:"from"`
	To   Duration `json:"to"`
	// Observed is the metric's value over the window.
	Observed float64 `json:"observed"`
	// Bound is the check's right-hand side, the baseline applied.
	Bound float64 `json:"bound"`
	// Unit is the unit of Observed and Bound (ms for timings).
	Unit string `json:"unit,omitempty"`
	Pass bool   `json:"pass"`
	// Samples is how many samples the observed value rests on.
	Samples int64 `json:"samples"`
	// Error says why the check could not be evaluated; such a check fails.
	Error string `json:"error,omitempty"`
	// NotApplicable says why the check had nothing to judge (a game day's
	// check of a fault window when no fault was injected); such a check
	// passes and reports show it as n/a.
	NotApplicable string `json:"not_applicable,omitempty"`
	// Understated says why the observed latency is a floor, not the
	// figure: the load waited for slow responses instead of sending on
	// time during the window (coordinated omission). The check stands as
	// judged; reports mark its figure "≥".
	Understated string `json:"understated,omitempty"`
	// Source says where the check comes from: empty for the scenario's
	// assertions, SourceScript for a k6 script's thresholds, SourceRun for
	// the run's own (load ran for its planned duration).
	Source string `json:"source,omitempty"`
}

// Verdict sources besides the scenario's assertions.
const (
	SourceScript = "script"
	SourceRun    = "run"
)

// Duration is a time.Duration that reads and writes as "1.5s" in JSON.
type Duration time.Duration

// String is Go's duration string.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText writes the duration as Go's duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Offset is how far t lies after the run's start.
func (r *Run) Offset(t time.Time) time.Duration { return t.Sub(r.Start) }
