// Package faults is the fault model and the schedule that applies and reverts
// it. Each fault kind lives in its own file and registers itself by name in
// init(), as Toxiproxy's toxics do. The package never evaluates SLOs.
package faults

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/chaosrun/chaosrun/scenario"
)

// Fault is one fault, ready to be applied to and reverted from a testbed.
type Fault interface {
	// Apply puts the fault in force. On error nothing of it stays in force.
	Apply(ctx context.Context, env Env) error
	// Revert removes the fault. It is idempotent: reverting a fault that is
	// not in force succeeds.
	Revert(ctx context.Context, env Env) error
	// Describe says what the fault does, for reports.
	Describe() string
}

// Env is the part of a testbed that faults act on.
type Env interface {
	// ProxiesFor names the Toxiproxy proxies of an edge ("from->to" or
	// "from->to.N").
	ProxiesFor(edge string) ([]string, error)
	// Toxics is the Toxiproxy API of the testbed.
	Toxics() ToxicAPI
}

// ToxicAPI is the part of Toxiproxy's API that faults use.
type ToxicAPI interface {
	AddToxic(ctx context.Context, proxy string, t Toxic) error
	RemoveToxic(ctx context.Context, proxy, name string) error
	SetProxyEnabled(ctx context.Context, proxy string, enabled bool) error
}

// ToxicLister is the part of Toxiproxy's API that reads a proxy's toxics
// back, for faults to see what something outside the run did to them.
type ToxicLister interface {
	ListToxics(ctx context.Context, proxy string) ([]Toxic, error)
}

// Toxic is a Toxiproxy toxic as its API reads it.
type Toxic struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Stream     string         `json:"stream"`
	Toxicity   float32        `json:"toxicity"`
	Attributes map[string]any `json:"attributes"`
}

// ErrNotFound is wrapped by ToxicAPI errors when the proxy or toxic does not
// exist.
var ErrNotFound = errors.New("not found")

// Factory builds a fault from its scenario entry; the entry's attributes
// have already passed Check.
type Factory func(spec scenario.Fault) (Fault, error)

// Attr describes one attribute of a fault kind.
type Attr struct {
	Name string
	// Unit is the attribute's unit as Toxiproxy reads it ("ms", "KB/s",
	// "bytes").
	Unit     string
	Min, Max float64
	Required bool
	// Doc says what the attribute does.
	Doc string
}

// String formats the attribute for "allowed" lists: "jitter (ms, 0..3600000)".
func (a Attr) String() string {
	req := ""
	if a.Required {
		req = ", required"
	}
	return fmt.Sprintf("%s (%s, %s..%s%s)", a.Name, a.Unit, fmtNum(a.Min), fmtNum(a.Max), req)
}

type kindInfo struct {
	factory Factory
	attrs   []Attr
	stage   scenario.EdgeStage
}

var (
	regMu    sync.RWMutex
	registry = map[string]kindInfo{}
)

// Register adds a fault kind with its attributes, acting on the
// connection (scenario.StageTCP). It panics if the kind is registered
// twice or f is nil.
func Register(kind string, f Factory, attrs ...Attr) {
	RegisterStage(kind, scenario.StageTCP, f, attrs...)
}

// RegisterStage adds a fault kind that needs stage on its edge (such as
// scenario.StageHTTP for a kind that reads requests), with its
// attributes. It panics if the kind is registered twice or f is nil.
func RegisterStage(kind string, stage scenario.EdgeStage, f Factory, attrs ...Attr) {
	regMu.Lock()
	defer regMu.Unlock()
	if f == nil {
		panic("faults: Register " + kind + " with a nil factory")
	}
	if _, dup := registry[kind]; dup {
		panic("faults: kind " + kind + " registered twice")
	}
	registry[kind] = kindInfo{factory: f, attrs: slices.Clone(attrs), stage: stage}
}

// StageOf is the stage kind declared when it registered; "" for a kind
// not registered.
func StageOf(kind string) scenario.EdgeStage {
	regMu.RLock()
	defer regMu.RUnlock()
	return registry[kind].stage
}

// Kinds lists the registered fault kinds, sorted.
func Kinds() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	ks := make([]string, 0, len(registry))
	for k := range registry {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Attrs lists the attributes of a registered kind, in registration order.
func Attrs(kind string) ([]Attr, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	info, ok := registry[kind]
	return slices.Clone(info.attrs), ok
}

// CheckError is one problem with a fault's kind or attributes.
type CheckError struct {
	Kind string
	// Attr is the offending attribute; empty when the kind is the problem.
	Attr    string
	Msg     string
	Allowed string
}

// Error formats the problem as `unknown fault kind "K" (allowed: ...)` or
// `K: attribute "A": msg (allowed: ...)`.
func (e *CheckError) Error() string {
	var b strings.Builder
	if e.Attr == "" {
		fmt.Fprintf(&b, "%s %q", e.Msg, e.Kind)
	} else {
		fmt.Fprintf(&b, "%s: attribute %q: %s", e.Kind, e.Attr, e.Msg)
	}
	if e.Allowed != "" {
		fmt.Fprintf(&b, " (allowed: %s)", e.Allowed)
	}
	return b.String()
}

// Check validates a kind and its attributes: the kind must be registered,
// every attribute known, whole and in range, and every required one present.
// Problems come back joined, in attribute-name order.
func Check(kind string, attrs map[string]float64) error {
	regMu.RLock()
	info, ok := registry[kind]
	regMu.RUnlock()
	if !ok {
		return &CheckError{Kind: kind, Msg: "unknown fault kind", Allowed: strings.Join(Kinds(), ", ")}
	}
	allowed := allowedAttrs(info.attrs)
	byName := map[string]Attr{}
	for _, a := range info.attrs {
		byName[a.Name] = a
	}
	var errs []error
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v := attrs[n]
		a, ok := byName[n]
		switch {
		case !ok:
			errs = append(errs, &CheckError{Kind: kind, Attr: n, Msg: "unknown attribute", Allowed: allowed})
		case math.IsNaN(v) || v < a.Min || v > a.Max:
			errs = append(errs, &CheckError{Kind: kind, Attr: n,
				Msg:     fmt.Sprintf("%s %s is out of range", fmtNum(v), a.Unit),
				Allowed: fmt.Sprintf("%s..%s %s", fmtNum(a.Min), fmtNum(a.Max), a.Unit)})
		case v != math.Trunc(v):
			errs = append(errs, &CheckError{Kind: kind, Attr: n,
				Msg: fmt.Sprintf("%s is not a whole number of %s", fmtNum(v), a.Unit), Allowed: "whole numbers"})
		}
	}
	for _, a := range info.attrs {
		if _, ok := attrs[a.Name]; a.Required && !ok {
			errs = append(errs, &CheckError{Kind: kind, Attr: a.Name, Msg: "missing required attribute", Allowed: allowed})
		}
	}
	return errors.Join(errs...)
}

func allowedAttrs(attrs []Attr) string {
	if len(attrs) == 0 {
		return "no attributes"
	}
	parts := make([]string, len(attrs))
	for i, a := range attrs {
		parts[i] = a.String()
	}
	return strings.Join(parts, "; ")
}

// New builds the fault a scenario entry describes, after checking its name,
// edge, kind, attributes, direction and toxicity.
func New(spec scenario.Fault) (Fault, error) {
	if spec.Name == "" {
		return nil, fmt.Errorf("fault on edge %q: empty name", spec.Edge)
	}
	if spec.Edge == "" && !IsHostKind(spec.Kind) {
		return nil, fmt.Errorf("fault %s: empty edge (allowed: \"from->to\" or \"from->to.N\")", spec.Name)
	}
	if err := Check(spec.Kind, spec.Attributes); err != nil {
		return nil, fmt.Errorf("fault %s: %w", spec.Name, err)
	}
	if _, err := stream(spec); err != nil {
		return nil, fmt.Errorf("fault %s: %w", spec.Name, err)
	}
	if _, err := toxicity(spec); err != nil {
		return nil, fmt.Errorf("fault %s: %w", spec.Name, err)
	}
	regMu.RLock()
	info := registry[spec.Kind]
	regMu.RUnlock()
	f, err := info.factory(spec)
	if err != nil {
		return nil, fmt.Errorf("fault %s: %w", spec.Name, err)
	}
	return f, nil
}

// stream is the Toxiproxy stream of a fault: downstream unless told.
func stream(spec scenario.Fault) (string, error) {
	switch spec.Direction {
	case "", "downstream":
		return "downstream", nil
	case "upstream":
		return "upstream", nil
	}
	return "", fmt.Errorf("direction %q is not known (allowed: downstream, upstream)", spec.Direction)
}

// toxicity is the fraction of connections a fault affects: 1 unless told.
func toxicity(spec scenario.Fault) (float64, error) {
	if spec.Toxicity == nil {
		return 1, nil
	}
	t := *spec.Toxicity
	if math.IsNaN(t) || t < 0 || t > 1 {
		return 0, fmt.Errorf("toxicity %v is out of range (allowed: 0..1)", t)
	}
	return t, nil
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
