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

// LoadPart is how one load process (a k6 process, one per shard) ended.
type LoadPart struct {
	// Name names the part as messages do ("k6", "k6 shard 2 of 3").
	Name string `json:"name"`
	// ExitCode is the process's exit code; -1 when a signal ended it.
	ExitCode int `json:"exit_code"`
	// ThresholdsCrossed says k6 found its own thresholds crossed over the
	// samples of this process (exit 99); the verdict is the record's,
	// judged over every part's samples merged.
	ThresholdsCrossed bool `json:"thresholds_crossed,omitempty"`
	// Ran is how long the process ran.
	Ran Duration `json:"ran"`
}
