package scenario

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/internal/suggest"
)

// overrideForms lists what --set accepts, for errors.
const overrideForms = "SERVICE.KEY=VALUE (config), SERVICE.config.KEY=VALUE, SERVICE.env.KEY=VALUE, SERVICE.replicas=N, " +
	"workload.duration=D, workload.script=FILE, workload.params.KEY=VALUE, workload.engine=native|k6, workload.connections=N, " +
	"workload.streams.NAME.KEY=VALUE, seed=N, timeout=D, " +
	"faults.NAME.start=D, faults.NAME.duration=D, faults.NAME.direction=DIR, faults.NAME.toxicity=X, " +
	"faults.NAME.attributes.KEY=N"

// Apply applies --set overrides (KEY=VALUE each) to a scenario. It checks
// their form and types; call Validate afterwards for the rest. Errors name
// the flag, e.g. `--set bank.bulkhead=off: unknown service "bank"`.
func Apply(s *Scenario, sets []string) error {
	m := metaOf(s)
	var errs Errors
	for _, set := range sets {
		path, err := apply(s, set)
		if err != nil {
			errs = append(errs, &Error{File: "--set " + set, Msg: err.Error(), Allowed: allowedOf(err)})
			continue
		}
		m.overridden(path, set)
	}
	return errs.errOrNil()
}

// allowedError is an error with an "allowed" part.
type allowedError struct {
	msg, allowed string
}

func (e *allowedError) Error() string { return e.msg }

func allowedOf(err error) string {
	if a, ok := err.(*allowedError); ok {
		return a.allowed
	}
	return ""
}

func errAllowed(allowed, format string, args ...any) error {
	return &allowedError{msg: fmt.Sprintf(format, args...), allowed: allowed}
}

// apply applies one override and returns the field path it set.
func apply(s *Scenario, set string) (string, error) {
	key, val, ok := strings.Cut(set, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return "", errAllowed(overrideForms, "want KEY=VALUE")
	}
	parts := strings.Split(key, ".")
	switch parts[0] {
	case "seed":
		if len(parts) != 1 {
			return "", errAllowed(overrideForms, "unknown key %q", key)
		}
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return "", fmt.Errorf("seed: want an integer, got %q", val)
		}
		s.Seed = n
		return "seed", nil
	case "timeout":
		if len(parts) != 1 {
			return "", errAllowed(overrideForms, "unknown key %q", key)
		}
		d, err := parseDuration(val)
		if err != nil {
			return "", fmt.Errorf("timeout: %w", err)
		}
		s.Timeout = d
		return "timeout", nil
	case "workload":
		return applyWorkload(s, parts[1:], val)
	case "faults":
		return applyFault(s, parts[1:], val)
	}
	return applyService(s, parts, val)
}

func applyWorkload(s *Scenario, parts []string, val string) (string, error) {
	const allowed = "workload.duration, workload.script, workload.params.KEY, workload.engine, workload.connections, workload.streams.NAME.KEY"
	switch {
	case len(parts) == 1 && parts[0] == "engine":
		s.Workload.Engine = val
		return "workload.engine", nil
	case len(parts) == 1 && parts[0] == "connections":
		n, err := strconv.Atoi(val)
		if err != nil {
			return "", fmt.Errorf("workload.connections: want an integer, got %q", val)
		}
		s.Workload.Connections = n
		return "workload.connections", nil
	case len(parts) >= 1 && parts[0] == "streams":
		return applyStream(s, parts[1:], val)
	case len(parts) == 1 && parts[0] == "duration":
		d, err := parseDuration(val)
		if err != nil {
			return "", fmt.Errorf("workload.duration: %w", err)
		}
		s.Workload.Duration = d
		return "workload.duration", nil
	case len(parts) == 1 && parts[0] == "script":
		s.Workload.Script = val
		return "workload.script", nil
	case len(parts) >= 2 && parts[0] == "params":
		k := strings.Join(parts[1:], ".")
		if s.Workload.Params == nil {
			s.Workload.Params = map[string]string{}
		}
		s.Workload.Params[k] = val
		return "workload.params." + k, nil
	}
	return "", errAllowed(allowed, "unknown workload key %q", "workload."+strings.Join(parts, "."))
}

func applyFault(s *Scenario, parts []string, val string) (string, error) {
	const allowed = "start, duration, direction, toxicity, attributes.KEY, match.method, match.path, match.path_regex, match.header.NAME"
	if len(parts) < 2 {
		return "", errAllowed("faults.NAME.KEY where KEY is one of "+allowed, "want faults.NAME.KEY")
	}
	// A fault name may hold dots: the key is what follows the longest
	// name that matches.
	for cut := len(parts) - 1; cut >= 1; cut-- {
		name := strings.Join(parts[:cut], ".")
		i := s.faultByName(name)
		if i < 0 {
			continue
		}
		f := &s.Faults[i]
		p := fmt.Sprintf("faults[%d]", i)
		rest := parts[cut:]
		switch {
		case len(rest) == 1 && (rest[0] == "start" || rest[0] == "duration"):
			d, err := parseDuration(val)
			if err != nil {
				return "", fmt.Errorf("faults.%s.%s: %w", name, rest[0], err)
			}
			if rest[0] == "start" {
				f.Start = d
			} else {
				f.Duration = d
			}
			return p + "." + rest[0], nil
		case len(rest) == 1 && rest[0] == "direction":
			f.Direction = val
			return p + ".direction", nil
		case len(rest) == 1 && rest[0] == "toxicity":
			x, err := parseNumber(val)
			if err != nil {
				return "", fmt.Errorf("faults.%s.toxicity: %w", name, err)
			}
			f.Toxicity = &x
			return p + ".toxicity", nil
		case len(rest) >= 2 && rest[0] == "match":
			return setMatch(f, p, rest[1:], val)
		case len(rest) == 2 && rest[0] == "attributes":
			x, err := parseNumber(val)
			if err != nil {
				return "", fmt.Errorf("faults.%s.attributes.%s: %w", name, rest[1], err)
			}
			if f.Attributes == nil {
				f.Attributes = map[string]float64{}
			}
			f.Attributes[rest[1]] = x
			return p + ".attributes." + rest[1], nil
		}
		return "", errAllowed(allowed, "unknown fault key %q", strings.Join(rest, "."))
	}
	return "", errAllowed(allowedList(s.faultNames()), "unknown fault %q", parts[0])
}

// setMatch sets one key of a fault's match: method, path, path_regex or
// header.NAME (an empty value removes it); validation checks the result.
func setMatch(f *Fault, p string, key []string, val string) (string, error) {
	if f.Match == nil {
		f.Match = &Match{}
	}
	m := f.Match
	switch {
	case len(key) == 1 && key[0] == "method":
		m.Method = val
	case len(key) == 1 && key[0] == "path":
		m.Path = val
	case len(key) == 1 && key[0] == "path_regex":
		m.PathRegex = val
	case len(key) == 2 && key[0] == "header":
		if m.Header == nil {
			m.Header = map[string]string{}
		}
		if m.Header[key[1]] = val; val == "" {
			delete(m.Header, key[1])
		}
	default:
		return "", errAllowed("match.method, match.path, match.path_regex, match.header.NAME", "unknown match key %q", strings.Join(key, "."))
	}
	return p + ".match." + strings.Join(key, "."), nil
}

func applyService(s *Scenario, parts []string, val string) (string, error) {
	name := parts[0]
	svc := s.Services[name]
	if svc == nil {
		return "", errAllowed(allowedList(append(s.serviceNames(), "workload", "faults", "seed", "timeout")), "unknown service %q", name)
	}
	p := "services." + name
	switch {
	case len(parts) == 2 && parts[1] == "replicas":
		n, err := strconv.Atoi(val)
		if err != nil {
			return "", fmt.Errorf("%s.replicas: want an integer, got %q", name, val)
		}
		svc.Replicas = n
		return p + ".replicas", nil
	case len(parts) >= 3 && parts[1] == "config":
		return setConfig(svc, p, strings.Join(parts[2:], "."), val), nil
	case len(parts) >= 3 && parts[1] == "env":
		k := strings.Join(parts[2:], ".")
		if _, ok := svc.Env[k]; !ok {
			return "", unknownEnv(name, svc, k)
		}
		svc.Env[k] = val
		return p + ".env." + k, nil
	case len(parts) >= 2:
		return setConfig(svc, p, strings.Join(parts[1:], "."), val), nil
	}
	return "", errAllowed(name+".KEY (config), "+name+".env.KEY, "+name+".replicas", "want %s.KEY=VALUE", name)
}

func setConfig(svc *Service, p, key, val string) string {
	if svc.Config == nil {
		svc.Config = map[string]string{}
	}
	svc.Config[key] = val
	return p + ".config." + key
}

// parseDuration parses an override's duration; like the file, it wants a
// unit ("0" aside).
func parseDuration(val string) (Duration, error) {
	val = strings.TrimSpace(val)
	if _, err := strconv.ParseFloat(val, 64); err == nil && val != "0" {
		return 0, fmt.Errorf("want a duration like 20s or 1m30s, got %s: a bare number has no unit (write %ss or %sms)", val, val, val)
	}
	d, err := time.ParseDuration(val)
	if err != nil {
		return 0, fmt.Errorf("want a duration like 20s or 1m30s, got %q", val)
	}
	return Duration(d), nil
}

func parseNumber(val string) (float64, error) {
	x, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("want a number, got %q", val)
	}
	return x, nil
}

// unknownEnv refuses an env override of a variable the service's env:
// does not set: it would override nothing the service was written with
// (most often a typo), so it is added to the file, not on the command line.
func unknownEnv(name string, svc *Service, k string) error {
	names := make([]string, 0, len(svc.Env))
	for n := range svc.Env {
		names = append(names, n)
	}
	slices.Sort(names)
	msg := fmt.Sprintf("%s sets no variable %q in its env:, so there is nothing to override", name, k)
	if near := suggest.Nearest(k, names); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	} else {
		msg += "; to add one, write it in the service's env:"
	}
	return errAllowed(allowedList(names), "%s", msg)
}
