package scenario

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/internal/suggest"
)

// MaxReplicas is the most instances one service may have.
const MaxReplicas = 16

// MaxLoad is the longest workload duration.
const MaxLoad = time.Hour

var (
	namePattern      = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	faultNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	configKeyPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	envNamePattern   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// Validate checks a scenario (after Parse or Apply) and fills its defaults.
// On failure the error is an Errors listing every problem, at the position
// of the offending value in the file or the --set flag that set it.
func Validate(s *Scenario, opts Options) error {
	return validate(s, opts, nil)
}

// validator collects problems with positions from the scenario's meta.
type validator struct {
	s    *Scenario
	m    *meta
	opts Options
	errs Errors
}

func validate(s *Scenario, opts Options, decodeErrs Errors) error {
	v := &validator{s: s, m: metaOf(s), opts: opts, errs: decodeErrs}
	v.top()
	v.services()
	v.workload()
	v.faults()
	v.assertions()
	v.endChecks()
	if err := v.errs.errOrNil(); err != nil {
		return err
	}
	applyDefaults(s)
	return nil
}

func (v *validator) add(p position, path, allowed, format string, args ...any) {
	v.errs = append(v.errs, &Error{File: p.file, Line: p.line, Col: p.col, Field: path, Msg: fmt.Sprintf(format, args...), Allowed: allowed})
}

// errf reports a problem at the position of path's value.
func (v *validator) errf(path, allowed, format string, args ...any) {
	v.add(v.m.at(path, v.s.File), path, allowed, format, args...)
}

// keyErrf reports a problem at the position of path's key.
func (v *validator) keyErrf(path, allowed, format string, args ...any) {
	v.add(v.m.atKey(path, v.s.File), path, allowed, format, args...)
}

// ok reports whether path decoded fine, so its checks are worth making.
func (v *validator) ok(path string) bool { return !v.m.isBad(path) }

// hook reports a hook's error at path; hooks' messages carry their own
// "allowed" part.
func (v *validator) hook(path string, err error) {
	if err != nil {
		v.errf(path, "", "%s", err.Error())
	}
}

// missing reports an empty required value: "missing" when the key is
// absent, "must not be empty" when it is there.
func (v *validator) missing(path, allowed string) {
	if _, there := v.m.pos[path]; there {
		v.errf(path, allowed, "must not be empty")
		return
	}
	v.errf(path, allowed, "missing (required)")
}

func (v *validator) nonNegative(path string, d Duration) bool {
	if v.ok(path) && d < 0 {
		v.errf(path, "", "must not be negative, got %s", d.Std())
		return false
	}
	return true
}

func (v *validator) top() {
	s := v.s
	if v.ok("version") && s.Version != 1 {
		v.errf("version", "1", "unsupported version %d", s.Version)
	}
	if v.ok("name") && !namePattern.MatchString(s.Name) {
		if s.Name == "" {
			v.missing("name", "")
		} else {
			v.errf("name", "lower-case letters, digits and -, starting with a letter or digit", "invalid name %q", s.Name)
		}
	}
	if v.nonNegative("timeout", s.Timeout) && v.ok("timeout") && v.ok("workload.duration") &&
		s.Timeout > 0 && s.Workload.Duration > 0 && s.Timeout < s.Workload.Duration {
		v.errf("timeout", "", "timeout %s is shorter than the workload (%s)", s.Timeout.Std(), s.Workload.Duration.Std())
	}
}

// serviceNames lists services in file order (sorted for scenarios built in
// Go without Order).
func (s *Scenario) serviceNames() []string {
	if len(s.Order) == len(s.Services) {
		all := true
		for _, n := range s.Order {
			if _, ok := s.Services[n]; !ok {
				all = false
				break
			}
		}
		if all {
			return s.Order
		}
	}
	names := make([]string, 0, len(s.Services))
	for n := range s.Services {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (v *validator) services() {
	s := v.s
	if !v.ok("services") {
		return
	}
	if len(s.Services) == 0 {
		v.errf("services", "", "at least one service is required")
		return
	}
	names := s.serviceNames()
	for _, name := range names {
		svc := s.Services[name]
		p := "services." + name
		if svc == nil {
			svc = &Service{}
			s.Services[name] = svc
		}
		if !namePattern.MatchString(name) {
			v.keyErrf(p, "lower-case letters, digits and -, starting with a letter or digit", "invalid service name %q", name)
		}
		if v.ok(p+".run") && !v.ownService(p, svc) {
			switch {
			case svc.Run == "":
				v.missing(p+".run", allowedList(v.opts.Targets)+"; or image: (docker) / command: (local) for your own service, or external: host:port for one already running")
			case v.opts.Targets != nil && !slices.Contains(v.opts.Targets, svc.Run):
				v.errf(p+".run", allowedList(v.opts.Targets), "unknown target %q", svc.Run)
			}
		}
		if v.ok(p+".replicas") && (svc.Replicas < 0 || svc.Replicas > MaxReplicas) {
			v.errf(p+".replicas", fmt.Sprintf("1 to %d", MaxReplicas), "replicas %d out of range", svc.Replicas)
		}
		v.serviceExtras(p, name, svc)
		v.configKeys(p, svc)
		seen := map[string]bool{}
		for i, dep := range svc.DependsOn {
			dp := fmt.Sprintf("%s.depends_on[%d]", p, i)
			switch {
			case !v.ok(dp):
			case dep == name:
				v.errf(dp, "", "service %s depends on itself", name)
			case s.Services[dep] == nil:
				v.errf(dp, allowedList(others(names, name)), "unknown service %q", dep)
			case seen[dep]:
				v.errf(dp, "", "%s is listed twice", dep)
			}
			seen[dep] = true
		}
	}
	v.cycles(names)
}

// others returns names without name.
func others(names []string, name string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == name })
}

// cycles reports each dependency cycle once, at the entry that closes it.
func (v *validator) cycles(names []string) {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var visit func(name string)
	visit = func(name string) {
		color[name] = grey
		stack = append(stack, name)
		for i, dep := range v.s.Services[name].DependsOn {
			if dep == name || v.s.Services[dep] == nil {
				continue
			}
			switch color[dep] {
			case white:
				visit(dep)
			case grey:
				start := slices.Index(stack, dep)
				cycle := append(slices.Clone(stack[start:]), dep)
				v.errf(fmt.Sprintf("services.%s.depends_on[%d]", name, i), "", "dependency cycle: %s", strings.Join(cycle, " -> "))
			}
		}
		stack = stack[:len(stack)-1]
		color[name] = black
	}
	for _, n := range names {
		if color[n] == white {
			visit(n)
		}
	}
}

func (v *validator) workload() {
	w := v.s.Workload
	if !v.ok("workload") {
		return
	}
	if v.nonNegative("workload.duration", w.Duration) && v.ok("workload.duration") {
		switch {
		case w.Duration == 0:
			v.errf("workload.duration", "", "must be greater than 0")
		case w.Duration.Std() > MaxLoad:
			v.errf("workload.duration", "at most "+MaxLoad.String(), "duration %s is too long", w.Duration.Std())
		}
	}
	switch EngineShape(v.engine()) {
	case ShapeScript:
		v.k6Workload()
	case ShapeStreams:
		v.nativeWorkload()
	case ShapeOwn:
	default:
		v.errf("workload.engine", strings.Join(EngineNames(), ", "), "unknown engine %q", w.Engine)
	}
}

// EngineName is the engine the workload runs on: Engine, else k6 for a
// workload with a script and native for one without.
func (w *Workload) EngineName() string {
	switch {
	case w.Engine != "":
		return w.Engine
	case w.Script != "":
		return EngineK6
	}
	return EngineNative
}

// engine is the engine the workload asks for: as EngineName, but a
// workload that writes script: or params: and no streams is a k6 one
// even when its script is empty or could not be read.
func (v *validator) engine() string {
	w := v.s.Workload
	_, script := v.m.pos["workload.script"]
	if w.Engine == "" && len(w.Streams) == 0 && (script || v.m.bad["workload.script"] || len(w.Params) > 0) {
		return EngineK6
	}
	return w.EngineName()
}

// k6Workload checks a workload run by a k6 script.
func (v *validator) k6Workload() {
	w := v.s.Workload
	v.k6()
	if v.ok("workload.script") && strings.TrimSpace(w.Script) == "" {
		v.missing("workload.script", "a k6 script in workloads/ or a path; or streams: for the native engine")
	}
	if len(w.Streams) > 0 {
		v.keyErrf("workload.streams", "", "a k6 workload runs its script; streams are for the native engine (remove engine: and script:, or the streams)")
	}
	if w.Connections != 0 {
		v.keyErrf("workload.connections", "", "connections bounds the native engine's; a k6 script sets its own")
	}
	if v.ok("workload.targets") && len(w.Targets) == 0 {
		v.errf("workload.targets", allowedList(v.s.serviceNames()), "at least one target service is required")
	}
	v.targets()
	for _, k := range sortedKeys(w.Params) {
		if !envNamePattern.MatchString(k) {
			v.keyErrf("workload.params."+k, "letters, digits and _, not starting with a digit", "invalid parameter name %q", k)
		}
	}
}

// targets checks that workload.targets names distinct services.
func (v *validator) targets() {
	if !v.ok("workload.targets") {
		return
	}
	seen := map[string]bool{}
	for i, t := range v.s.Workload.Targets {
		p := fmt.Sprintf("workload.targets[%d]", i)
		switch {
		case !v.ok(p):
		case v.s.Services[t] == nil:
			v.errf(p, allowedList(v.s.serviceNames()), "unknown service %q", t)
		case seen[t]:
			v.errf(p, "", "%s is listed twice", t)
		case v.s.Services[t].ByName() && v.s.Services[t].Port == 0:
			v.errf(p, "a service with a port: ports: or expose: in its file, or port: in the scenario's services: entry",
				"%s declares no port to put load on", t)
		}
		seen[t] = true
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// endChecks validates end_checks: unique names, existing services, paths.
func (v *validator) endChecks() {
	seen := map[string]bool{}
	for i, ec := range v.s.EndChecks {
		p := fmt.Sprintf("end_checks[%d]", i)
		switch {
		case ec.Name == "":
			v.missing(p+".name", "")
		case !namePattern.MatchString(ec.Name):
			v.errf(p+".name", "lower-case letters, digits and -", "invalid name %q", ec.Name)
		case seen[ec.Name]:
			v.errf(p+".name", "", "duplicate end check name %q", ec.Name)
		}
		seen[ec.Name] = true
		if ec.Service == "" {
			v.missing(p+".service", strings.Join(v.s.serviceNames(), ", "))
		} else if _, ok := v.s.Services[ec.Service]; !ok {
			v.errf(p+".service", strings.Join(v.s.serviceNames(), ", "), "unknown service %q", ec.Service)
		}
		if !strings.HasPrefix(ec.Path, "/") {
			v.errf(p+".path", "a path starting with /", "invalid path %q", ec.Path)
		}
	}
}

// configKeys checks a service's config: keys: well formed, and for a
// built-in target one of its flags (a typo would otherwise stop the
// target at start, after the whole testbed came up).
func (v *validator) configKeys(p string, svc *Service) {
	var flags []string
	if v.opts.TargetFlags != nil && svc.Run != "" && !svc.Own() && svc.External == "" {
		flags = v.opts.TargetFlags(svc.Run)
	}
	for _, k := range sortedKeys(svc.Config) {
		kp := p + ".config." + k
		switch {
		case !configKeyPattern.MatchString(k):
			v.keyErrf(kp, "letters, digits, _, . and -", "invalid config key %q", k)
		case flags != nil && !slices.Contains(flags, k):
			msg := fmt.Sprintf("%s has no flag %q", svc.Run, k)
			if near := suggest.Nearest(k, flags); near != "" {
				msg += fmt.Sprintf("; did you mean %q?", near)
			}
			v.keyErrf(kp, allowedList(flags), "%s", msg)
		}
	}
}
