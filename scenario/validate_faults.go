package scenario

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// faultByName returns the index of the named fault, or -1.
func (s *Scenario) faultByName(name string) int {
	return slices.IndexFunc(s.Faults, func(f Fault) bool { return f.Name == name })
}

func (s *Scenario) faultNames() []string {
	names := make([]string, 0, len(s.Faults))
	for _, f := range s.Faults {
		if f.Name != "" && !slices.Contains(names, f.Name) {
			names = append(names, f.Name)
		}
	}
	return names
}

// edgeNames lists the dependency edges "from->to" of the scenario.
func (s *Scenario) edgeNames() []string {
	var out []string
	for _, from := range s.serviceNames() {
		for _, to := range s.deps(from) {
			if e := from + "->" + to; s.Services[to] != nil && to != from && !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
	}
	return append(out, s.externalEdges()...)
}

// parseEdge splits "from->to" or "from->to.N"; replica is -1 without .N.
// The error says what is wrong and, in allowed, what would do.
func (s *Scenario) parseEdge(edge string) (from, to string, replica int, allowed string, err error) {
	edges := allowedList(s.edgeNames())
	from, rest, found := strings.Cut(edge, "->")
	from, rest = strings.TrimSpace(from), strings.TrimSpace(rest)
	if !found || from == "" || rest == "" {
		return "", "", 0, edges, fmt.Errorf("edge %q is not of the form from->to or from->to.N", edge)
	}
	to, replica = rest, -1
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		n, err := strconv.Atoi(rest[i+1:])
		if err != nil || n < 0 {
			return "", "", 0, edges, fmt.Errorf("edge %q: replica index %q is not a number", edge, rest[i+1:])
		}
		to, replica = rest[:i], n
	}
	if s.isExternalEdge(from, to) {
		if replica > 0 {
			return "", "", 0, from + "->" + to, fmt.Errorf("edge %q: an external service has one address", edge)
		}
		return from, to, replica, "", nil
	}
	src := s.Services[from]
	if src == nil {
		return "", "", 0, edges, fmt.Errorf("edge %q: unknown service %q", edge, from)
	}
	if !slices.Contains(src.DependsOn, to) || s.Services[to] == nil || to == from {
		return "", "", 0, edges, fmt.Errorf("edge %s->%s does not exist: %s does not depend on %s", from, to, from, to)
	}
	if n := max(s.Services[to].Replicas, 1); replica >= n {
		allowed = fmt.Sprintf("%s->%s or %s->%s.0 to %s->%s.%d", from, to, from, to, from, to, n-1)
		if n == 1 {
			allowed = fmt.Sprintf("%s->%s or %s->%s.0", from, to, from, to)
		}
		return "", "", 0, allowed, fmt.Errorf("edge %q: replica %d out of range: %s has %d replica(s)", edge, replica, to, n)
	}
	return from, to, replica, "", nil
}

func (v *validator) faults() {
	s := v.s
	names := map[string]int{}
	for i := range s.Faults {
		f := &s.Faults[i]
		p := fmt.Sprintf("faults[%d]", i)
		if !v.ok(p) {
			continue
		}
		if v.ok(p + ".name") {
			switch first, dup := names[f.Name]; {
			case f.Name == "":
				v.missing(p+".name", "")
			case CheckFaultName(f.Name) != nil:
				v.errf(p+".name", FaultNameAllowed, "invalid fault name %.40q", f.Name)
			case dup:
				v.errf(p+".name", "", "duplicate fault name %q (also faults[%d])", f.Name, first)
			default:
				names[f.Name] = i
			}
		}
		kindOK := v.ok(p+".kind") && v.ok(p+".attributes")
		if kindOK && f.Kind == "" {
			v.missing(p+".kind", "")
		} else if kindOK && v.opts.FaultKind != nil {
			if err := v.opts.FaultKind(f.Kind, f.Attributes); err != nil {
				v.faultKindErr(p, f, err)
			}
		}
		f.Stage = v.stage(f.Kind)
		if v.hostFault(p, f) {
			// a host fault: checked by hostFault
		} else if v.ok(p+".edge") && v.ok("services") {
			if _, _, _, allowed, err := s.parseEdge(f.Edge); err != nil {
				if f.Edge == "" {
					v.missing(p+".edge", allowed)
				} else {
					v.errf(p+".edge", allowed, "%s", err.Error())
				}
			}
		}
		startOK := v.nonNegative(p+".start", f.Start) && v.ok(p+".start")
		durOK := v.nonNegative(p+".duration", f.Duration) && v.ok(p+".duration")
		if durOK && f.Duration == 0 {
			v.errf(p+".duration", "", "must be greater than 0")
			durOK = false
		}
		if startOK && durOK && v.ok("workload.duration") && s.Workload.Duration > 0 && f.Start+f.Duration > s.Workload.Duration {
			third := (s.Workload.Duration.Std() / 3).Round(time.Second)
			v.errf(p+".duration", "", "fault %q ends at %s, after the load ends (workload.duration %s); for a shorter run, shorten the fault too: --set faults.%s.start=%s --set faults.%s.duration=%s",
				f.Name, (f.Start + f.Duration).Std(), s.Workload.Duration.Std(), f.Name, third, f.Name, third)
		}
		if v.ok(p+".direction") && f.Direction != "" && f.Direction != "downstream" && f.Direction != "upstream" {
			v.errf(p+".direction", "downstream, upstream", "unknown direction %q", f.Direction)
		}
		if v.ok(p+".toxicity") && f.Toxicity != nil && (*f.Toxicity < 0 || *f.Toxicity > 1) {
			v.errf(p+".toxicity", "0 to 1", "toxicity %g out of range", *f.Toxicity)
		}
		v.match(p, f)
	}
}

// faultKindErr places the FaultKind hook's error: at an attribute it
// names, else at the kind when it names the kind, else at the attributes.
func (v *validator) faultKindErr(p string, f *Fault, err error) {
	msg := err.Error()
	for _, k := range sortedKeys(f.Attributes) {
		if strings.Contains(msg, strconv.Quote(k)) {
			v.add(v.m.atKey(p+".attributes."+k, v.s.File), p+".attributes", "", "%s", msg)
			return
		}
	}
	if f.Attributes == nil || strings.Contains(msg, strconv.Quote(f.Kind)) {
		v.errf(p+".kind", "", "%s", msg)
		return
	}
	v.errf(p+".attributes", "", "%s", msg)
}

// span is a time interval [from, to) from load start.
type span struct{ from, to time.Duration }

// windowSpan parses a window ("whole", "before F", "during F", "after F")
// into its span; allowed lists what would do when it cannot.
func (s *Scenario) windowSpan(w string) (span, string, error) {
	total := s.Workload.Duration.Std()
	var allowed []string
	allowed = append(allowed, "whole", "all")
	for _, n := range s.faultNames() {
		allowed = append(allowed, "before "+n, "during "+n, "after "+n)
	}
	parts := strings.Fields(w)
	if len(parts) == 1 && (parts[0] == "whole" || parts[0] == "all") {
		return span{0, total}, "", nil
	}
	if len(parts) != 2 {
		return span{}, allowedList(allowed), fmt.Errorf("unknown window %q", w)
	}
	i := s.faultByName(parts[1])
	if i < 0 {
		return span{}, allowedList(allowed), fmt.Errorf("window %q: unknown fault %q", w, parts[1])
	}
	f := s.Faults[i]
	start, end := f.Start.Std(), (f.Start + f.Duration).Std()
	switch parts[0] {
	case "before":
		return span{0, start}, "", nil
	case "during":
		return span{start, end}, "", nil
	case "after":
		return span{end, total}, "", nil
	}
	return span{}, allowedList(allowed), fmt.Errorf("unknown window %q", w)
}

// defaultBaseline is "before" the earliest fault, or "whole" without faults.
func (s *Scenario) defaultBaseline() string {
	first := -1
	for i, f := range s.Faults {
		if f.Name != "" && (first < 0 || f.Start < s.Faults[first].Start) {
			first = i
		}
	}
	if first < 0 {
		return "whole"
	}
	return "before " + s.Faults[first].Name
}

func (v *validator) assertions() {
	s := v.s
	faultsOK := v.ok("faults") && v.ok("workload.duration")
	for i := range s.Faults {
		faultsOK = faultsOK && v.ok(fmt.Sprintf("faults[%d]", i))
	}
	// Spans are only worth checking when the faults' times are sound.
	spansOK := faultsOK && !slices.ContainsFunc(v.errs, func(e *Error) bool { return strings.HasPrefix(e.Field, "faults") })
	names := map[string]int{}
	for i := range s.Assertions {
		a := &s.Assertions[i]
		p := fmt.Sprintf("assertions[%d]", i)
		if !v.ok(p) {
			continue
		}
		if v.ok(p + ".name") {
			first, dup := names[a.Name]
			switch {
			case strings.TrimSpace(a.Name) == "":
				v.missing(p+".name", "")
			case dup:
				v.errf(p+".name", "", "duplicate assertion name %q (also assertions[%d])", a.Name, first)
			default:
				names[a.Name] = i
			}
		}
		if v.ok(p + ".metric") {
			if strings.TrimSpace(a.Metric) == "" {
				v.missing(p+".metric", "")
			} else if v.opts.Metric != nil {
				err := v.opts.Metric(a.Metric)
				if err == nil && v.opts.Emits != nil {
					err = v.opts.Emits(v.s, a.Metric)
				}
				v.hook(p+".metric", err)
			}
		}
		settleOK := v.nonNegative(p+".settle", a.Settle) && v.ok(p+".settle")
		window := a.Window
		if window == "" {
			window = "whole"
		}
		if v.ok(p+".window") && faultsOK {
			w, allowed, err := s.windowSpan(window)
			switch {
			case err != nil:
				v.errf(p+".window", allowed, "%s", err.Error())
			case !spansOK:
			case w.to <= w.from:
				v.errf(p+".window", "", "window %q is empty (%s to %s of the load)", window, w.from, w.to)
			case settleOK && w.from+a.Settle.Std() >= w.to:
				v.errf(p+".settle", "", "settle %s leaves nothing of window %q (%s long)", a.Settle.Std(), window, w.to-w.from)
			}
		}
		baseline, defaulted := a.Baseline, a.Baseline == "" || v.m.defaultBaseline[i]
		if defaulted {
			baseline = s.defaultBaseline()
		}
		usesBaseline := slices.ContainsFunc(a.Checks, func(c Check) bool { return strings.Contains(c.Threshold, "baseline") })
		if v.ok(p+".baseline") && faultsOK {
			w, allowed, err := s.windowSpan(baseline)
			switch {
			case err != nil:
				v.errf(p+".baseline", allowed, "%s", strings.Replace(err.Error(), "window", "baseline", 1))
			case !spansOK:
			case w.to <= w.from && usesBaseline && defaulted:
				v.errf(p+".baseline", "", "the default baseline %q is empty (the first fault starts at once); set baseline", baseline)
			case w.to <= w.from && usesBaseline:
				v.errf(p+".baseline", "", "baseline %q is empty (%s to %s of the load)", baseline, w.from, w.to)
			}
		}
		v.checks(p, a)
	}
}

// checks validates an assertion's checks: each expression, and the abort
// options of the object form.
func (v *validator) checks(p string, a *Assertion) {
	if !v.ok(p + ".checks") {
		return
	}
	if len(a.Checks) == 0 {
		v.errf(p+".checks", "", "at least one check is required, e.g. \"p(99) < 250ms\"")
	}
	for j, c := range a.Checks {
		cp := fmt.Sprintf("%s.checks[%d]", p, j)
		tp := cp
		if _, object := v.m.pos[cp+".threshold"]; object {
			tp = cp + ".threshold"
		}
		switch {
		case !v.ok(cp) || !v.ok(cp+".threshold"):
			continue
		case strings.TrimSpace(c.Threshold) == "":
			v.errf(tp, "", "empty check")
		case v.opts.Check != nil:
			v.hook(tp, v.opts.Check(c.Threshold))
		}
		v.abort(cp, a, c)
	}
}

// abort validates a check's abortOnFail and delayAbortEval.
func (v *validator) abort(cp string, a *Assertion, c Check) {
	dp := cp + ".delayAbortEval"
	switch {
	case !v.ok(dp) || !v.ok(cp+".abortOnFail"):
	case c.DelayAbortEval < 0:
		v.errf(dp, "", "must not be negative, got %s", c.DelayAbortEval.Std())
	case c.DelayAbortEval > 0 && !c.AbortOnFail:
		v.errf(dp, "", "delayAbortEval delays abortOnFail: set abortOnFail: true, or remove it")
	case c.AbortOnFail && v.ok("workload.duration") && v.s.Workload.Duration > 0 && c.DelayAbortEval >= v.s.Workload.Duration:
		v.errf(dp, "less than the load ("+v.s.Workload.Duration.Std().String()+")",
			"delayAbortEval %s: the check could never stop the run", c.DelayAbortEval.Std())
	}
	if c.AbortOnFail && v.opts.LiveMetric != nil && v.ok(cp+".abortOnFail") {
		if err := v.opts.LiveMetric(a.Metric); err != nil {
			v.errf(cp+".abortOnFail", "", "%s", err.Error())
		}
	}
}

// applyDefaults fills what the file left out; it runs on a valid scenario.
func applyDefaults(s *Scenario) {
	m := metaOf(s)
	for _, svc := range s.Services {
		if svc.Replicas == 0 {
			svc.Replicas = 1
		}
		switch {
		case !svc.Health.IsZero():
		case svc.External != "":
			svc.Health.Check = HealthTCP // someone else's service: no health path is known
		default:
			svc.Health.Check = "/healthz"
		}
	}
	s.Workload.applyDefaults()
	for i := range s.Faults {
		f := &s.Faults[i]
		if f.Direction == "" {
			f.Direction = "downstream"
		}
		if f.Toxicity == nil {
			one := 1.0
			f.Toxicity = &one
		}
	}
	for i := range s.Assertions {
		a := &s.Assertions[i]
		a.Window = canonicalWindow(a.Window)
		if a.Baseline == "" || m.defaultBaseline[i] {
			a.Baseline = s.defaultBaseline()
			m.defaultBaseline[i] = true
		}
		a.Baseline = canonicalWindow(a.Baseline)
	}
}

// canonicalWindow writes a window with single spaces; "" is whole.
func canonicalWindow(w string) string {
	if f := strings.Fields(w); len(f) > 0 {
		return strings.Join(f, " ")
	}
	return "whole"
}
