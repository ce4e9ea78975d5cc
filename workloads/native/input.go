package native

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/chaosrun/chaosrun/scenario"
)

// ReadSpec decodes a spec written as JSON (what a harness hands a load
// process), strictly: an unknown field is an error. Errors say where
// (name:line:col) and what; the spec is validated.
func ReadSpec(name string, data []byte) (Spec, error) {
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("%s: %w", where(name, data, err), plain(err))
	}
	if dec.More() {
		return Spec{}, fmt.Errorf("%s: more than one JSON value (want one spec)", where(name, data, nil))
	}
	if err := s.Validate(); err != nil {
		return Spec{}, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// where is name:line:col of a decoding error's offset, or name alone.
func where(name string, data []byte, err error) string {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset - 1 // the offending byte
	case errors.As(err, &te):
		off = te.Offset // just after the value
	case errors.Is(err, io.ErrUnexpectedEOF):
		off = int64(len(data))
	}
	if off < 0 {
		return name
	}
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("%s:%d:%d", name, line, col)
}

// plain is a decoding error as a reader wants it.
func plain(err error) error {
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te):
		return fmt.Errorf("field %s: a JSON %s where %s belongs", te.Field, te.Value, te.Type)
	case errors.Is(err, io.EOF):
		return errors.New("empty: want a JSON spec")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the JSON ends too early")
	}
	return err
}

// ParseTargets reads SVC=URL[,URL…] values (one per service; a URL
// without a scheme is http://) into each service's base URLs, in replica
// order.
func ParseTargets(values []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, v := range values {
		svc, list, ok := strings.Cut(v, "=")
		svc = strings.TrimSpace(svc)
		if !ok || svc == "" || strings.TrimSpace(list) == "" {
			return nil, fmt.Errorf("target %q: want SERVICE=URL[,URL…], e.g. bank=http://bank-0:8080", v)
		}
		if _, dup := out[svc]; dup {
			return nil, fmt.Errorf("target %s given twice: list its replicas' URLs in one value, comma-separated", svc)
		}
		for _, raw := range strings.Split(list, ",") {
			raw = strings.TrimSpace(raw)
			if !strings.Contains(raw, "://") {
				raw = "http://" + raw
			}
			u, err := url.Parse(raw)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
				return nil, fmt.Errorf("target %s: %q: want http(s)://HOST:PORT[/PATH] or HOST:PORT", svc, raw)
			}
			out[svc] = append(out[svc], strings.TrimSuffix(raw, "/"))
		}
	}
	return out, nil
}

// URLs looks a service's base URLs up in targets, for FromScenario.
func URLs(targets map[string][]string) func(string) ([]string, error) {
	return func(svc string) ([]string, error) {
		if u := targets[svc]; len(u) > 0 {
			return u, nil
		}
		return nil, fmt.Errorf("no URL given for service %s (--target %s=URL[,URL…])", svc, svc)
	}
}

// ForTargets is sc's native workload as one load process runs it: aimed
// at targets' base URLs (SVC=URL[,URL…] values, each a service the
// workload sends to), seeded with seed (0: the scenario's), for the
// workload's duration.
func ForTargets(sc *scenario.Scenario, targets []string, seed int64) (Spec, error) {
	if e := sc.Workload.EngineName(); e != scenario.EngineNative {
		return Spec{}, fmt.Errorf("%s: its workload runs on engine %s; load runs native workloads (k6 runs its own)", sc.File, e)
	}
	urls, err := ParseTargets(targets)
	if err != nil {
		return Spec{}, fmt.Errorf("--target: %w", err)
	}
	for svc := range urls {
		if !slices.Contains(sc.Workload.Targets, svc) {
			return Spec{}, fmt.Errorf("--target %s: the workload sends nothing to it (allowed: %s)", svc, strings.Join(sc.Workload.Targets, ", "))
		}
	}
	if seed == 0 {
		seed = sc.Seed
	}
	spec, err := FromRun(sc, URLs(urls), seed, sc.Workload.Duration.Std())
	if err != nil {
		return Spec{}, fmt.Errorf("%s: %w", sc.File, err)
	}
	return spec, nil
}
