package record

// NotApplied is a scheduled fault that never took effect.
type NotApplied struct {
	Fault  string `json:"fault"`
	Kind   string `json:"kind"`
	Target string `json:"target"`
	// Start is the fault's planned start, an offset from load start.
	Start Duration `json:"start"`
	// Reason says why: load ended, or the run was aborted, before Start.
	Reason string `json:"reason"`
}

// LoadPart is how one load process (k6 or `chaosrun load`, one per shard)
// ran and ended.
type LoadPart struct {
	// Name names the part as messages do ("k6", "k6 shard 2 of 3").
	Name string `json:"name"`
	// ExitCode is the process's exit code; -1 when a signal ended it (or
	// it never ended).
	ExitCode int `json:"exit_code"`
	// ThresholdsCrossed says k6 found its own thresholds crossed over the
	// samples of this process (exit 99); the verdict is the record's,
	// judged over every part's samples merged.
	ThresholdsCrossed bool `json:"thresholds_crossed,omitempty"`
	// Crossed are the thresholds k6 found crossed, from its summary
	// (summary.json); empty when it wrote none.
	Crossed []Threshold `json:"crossed,omitempty"`
	// PID is the process's id while it ran.
	PID int `json:"pid,omitempty"`
	// Ran is how long the process ran.
	Ran Duration `json:"ran"`
}

// ScriptCheck is one of the load's own checks (a k6 script's threshold),
// as the run judged it: verdicts of source script. `chaosrun judge` reads
// them from the record to judge the run again.
type ScriptCheck struct {
	// Assertion names the check's verdict ("threshold http_req_duration").
	Assertion string `json:"assertion"`
	// Metric is the metric selector; Window the window, as in a scenario.
	Metric string `json:"metric"`
	Window string `json:"window,omitempty"`
	// Check is the expression ("p(95)<200").
	Check string `json:"check"`
	// AbortOnFail and DelayAbortEval are k6's object form.
	AbortOnFail    bool     `json:"abort_on_fail,omitempty"`
	DelayAbortEval Duration `json:"delay_abort_eval,omitempty"`
}

// Threshold names a k6 threshold: its metric key as the script writes it
// (http_req_duration{status:200}) and its expression.
type Threshold struct {
	Key  string `json:"key"`
	Expr string `json:"threshold"`
}
