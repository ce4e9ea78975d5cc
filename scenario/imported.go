package scenario

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Named is a service and its name, as an importer (of a Compose file)
// returns it.
type Named struct {
	Name    string
	Service *Service
}

// refinable lists what a scenario may say of an imported service.
const refinable = "env, health, metrics, port"

// composeAllowed is what compose: may name.
const composeAllowed = "a Compose file, or a list of them, inside the scenario's folder"

// importCompose brings in the services of the scenario's Compose file,
// first in the file's order, each refined by the scenario's services:
// entry of the same name; the scenario's other services follow.
func importCompose(s *Scenario, opts Options) Errors {
	if len(s.Compose) == 0 {
		return nil
	}
	at := s.meta.at("compose", s.File)
	bad := func(format string, args ...any) Errors {
		s.meta.bad["compose"] = true
		return Errors{{File: at.file, Line: at.line, Col: at.col, Field: "compose", Msg: fmt.Sprintf(format, args...), Allowed: composeAllowed}}
	}
	if opts.Compose == nil {
		return bad("Compose files are not read here")
	}
	imported, err := opts.Compose(s.File, s.Compose)
	if err != nil {
		var errs Errors
		if errors.As(err, &errs) {
			s.meta.bad["compose"] = true
			return errs
		}
		return bad("%v", err)
	}
	if s.Services == nil {
		s.Services = map[string]*Service{}
	}
	var errs Errors
	order := make([]string, 0, len(imported)+len(s.Order))
	for _, n := range imported {
		errs = append(errs, s.refine(n)...)
		order = append(order, n.Name)
	}
	for _, n := range s.Order {
		if !slices.Contains(order, n) {
			order = append(order, n)
		}
	}
	s.Order = order
	s.meta.order["services"] = order
	return errs
}

// refine merges an imported service with the scenario's entry of its name.
func (s *Scenario) refine(n Named) Errors {
	p := "services." + n.Name
	im := n.Service.Imported
	if _, ok := s.meta.pos[p]; !ok && im != nil {
		pos := position{file: im.File, line: im.Line, col: im.Col}
		s.meta.pos[p], s.meta.keyPos[p] = pos, pos
	}
	own := s.Services[n.Name]
	s.Services[n.Name] = n.Service
	if own == nil {
		return nil
	}
	var errs Errors
	for _, f := range []struct {
		key string
		set bool
	}{{"run", own.Run != ""}, {"image", own.Image != ""}, {"command", len(own.Command) > 0}, {"replicas", own.Replicas != 0},
		{"config", len(own.Config) > 0}, {"depends_on", len(own.DependsOn) > 0}, {"external", own.External != ""}} {
		if f.set {
			at := s.meta.atKey(p+"."+f.key, s.File)
			errs = append(errs, &Error{File: at.file, Line: at.line, Col: at.col, Field: p + "." + f.key,
				Msg: fmt.Sprintf("%s comes from the Compose file %s: set %s there", n.Name, s.Compose.String(), f.key), Allowed: refinable})
		}
	}
	svc := n.Service
	for k, v := range own.Env {
		if svc.Env == nil {
			svc.Env = map[string]string{}
		}
		svc.Env[k] = v
	}
	if !own.Health.IsZero() {
		svc.Health = own.Health
	}
	if own.Metrics != nil {
		svc.Metrics = own.Metrics
	}
	if own.Port != 0 {
		svc.Port = own.Port
	}
	return errs
}

// byNameChecks checks what a service from another file needs: an image
// to run (its importer names the one it builds when the file builds it).
func (v *validator) byNameChecks(p string, svc *Service) {
	if strings.TrimSpace(svc.Image) == "" && v.ok(p+".image") {
		v.errf(p+".image", "an image, or a build the file describes", "the imported service has neither an image nor a build")
	}
}

// Files is one file or several, written as a string or a list.
type Files []string

// String is the files joined by ", ".
func (f Files) String() string { return strings.Join(f, ", ") }

// MarshalYAML writes one file as a string, several as a list.
func (f Files) MarshalYAML() (any, error) {
	if len(f) == 1 {
		return f[0], nil
	}
	return []string(f), nil
}

// decodeNode reads a string or a list of strings.
func (f *Files) decodeNode(d *decoder, n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.ScalarNode:
		var one string
		d.value(n, reflect.ValueOf(&one).Elem(), path, false)
		if one != "" {
			*f = Files{one}
		}
	case yaml.SequenceNode:
		d.value(n, reflect.ValueOf((*[]string)(f)).Elem(), path, false)
	default:
		d.bad(n, path, composeAllowed, "want a file or a list of files, got %s", describe(n))
	}
}
