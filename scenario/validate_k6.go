package scenario

import (
	"fmt"
	"regexp"
	"strings"
)

// outputNamePattern is a k6 output's name.
var outputNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// refusedK6Flags are the `k6 run` flags that would break the harness, with
// what to do instead; the short forms map to their long names.
var refusedK6Flags = map[string]string{
	"out":                        "add outputs under workload.k6.outputs; chaosrun adds its own resilience output",
	"execution-segment":          "chaosrun sets the execution segments for --load-shards",
	"execution-segment-sequence": "chaosrun sets the execution segments for --load-shards",
	"address":                    "chaosrun runs k6 with its REST API off",
	"duration":                   "set workload.duration",
	"env":                        "set workload.params",
	"include-system-env-vars":    "the script would see the harness's environment; pass values with workload.params",
	"blacklist-ip":               "the blast radius is chaosrun's: allow_targets or --allow-target",
	"block-hostnames":            "the blast radius is chaosrun's: allow_targets or --allow-target",
	"linger":                     "k6 would not end after the test",
	"paused":                     "k6 would wait for a resume that never comes",
	"summary-export":             "chaosrun keeps k6's summary in the results folder (k6/summary.json)",
	"config":                     "a config file may set outputs and the REST API; put its options in the script or here",
}

// k6ShortFlags are k6's one-letter flags by long name.
var k6ShortFlags = map[string]string{"o": "out", "a": "address", "d": "duration", "e": "env", "l": "linger", "p": "paused", "c": "config",
	"u": "vus", "i": "iterations", "s": "stage", "q": "quiet", "v": "verbose"}

// k6 validates workload.k6: outputs by name, flags in their long form and
// none of those the harness sets or needs.
func (v *validator) k6() {
	k := v.s.Workload.K6
	if k == nil || !v.ok("workload.k6") {
		return
	}
	for i, out := range k.Outputs {
		p := fmt.Sprintf("workload.k6.outputs[%d]", i)
		name, _, _ := strings.Cut(out, "=")
		switch {
		case !v.ok(p):
		case !outputNamePattern.MatchString(name):
			v.errf(p, "NAME or NAME=ARGUMENT, e.g. csv=results.csv, web-dashboard=export=dashboard.html", "invalid k6 output %q", out)
		case name == "resilience":
			v.errf(p, "", "chaosrun streams its results through its own resilience output; another one would take its place")
		}
	}
	for i, f := range k.Flags {
		p := fmt.Sprintf("workload.k6.flags[%d]", i)
		if !v.ok(p) {
			continue
		}
		name, ok := K6FlagName(f)
		if !ok {
			v.errf(p, "--NAME or --NAME=VALUE"+longForm(f), "k6 flag %q: write each flag in its long form, its value after =", f)
			continue
		}
		if why, refused := refusedK6Flags[name]; refused {
			v.errf(p, "", "k6 flag --%s is not allowed: %s", name, why)
		}
	}
}

// K6FlagName is the long name of a flag written --name or --name=value.
func K6FlagName(flag string) (string, bool) {
	rest, ok := strings.CutPrefix(flag, "--")
	name, _, _ := strings.Cut(rest, "=")
	if !ok || !outputNamePattern.MatchString(name) {
		return "", false
	}
	return name, true
}

// longForm names the long form of a one-letter flag ("-u 10"), if known.
func longForm(flag string) string {
	if len(flag) < 2 || flag[0] != '-' || flag[1] == '-' {
		return ""
	}
	if long, ok := k6ShortFlags[flag[1:2]]; ok {
		return "; -" + flag[1:2] + " is --" + long
	}
	return ""
}
