package scenario

// K6 is what a k6 workload adds to k6's command line, beside what chaosrun
// sets itself (its results output, the blast radius, the shards' execution
// segments).
type K6 struct {
	// Outputs are more k6 outputs, one --out each: csv=results.csv,
	// json=samples.json, web-dashboard=export=dashboard.html,
	// experimental-prometheus-rw. Files land in the run's results folder,
	// under k6/.
	Outputs []string `yaml:"outputs,omitempty" json:"outputs,omitempty"`
	// Flags are more `k6 run` flags, each --name or --name=value, e.g.
	// --tag=team=payments or --summary-trend-stats=avg,p(99).
	Flags []string `yaml:"flags,omitempty" json:"flags,omitempty"`
}
