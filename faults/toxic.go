package faults

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/chaosrun/chaosrun/scenario"
)

// MaxMillis bounds every attribute given in milliseconds: one hour.
const MaxMillis = 3_600_000

// ToxicName is the name of the toxic a fault adds to each proxy of its edge,
// so revert removes exactly what apply added.
func ToxicName(fault string) string { return "chaosrun-" + fault }

// toxicFault is a fault made of one Toxiproxy toxic on every proxy of an edge.
type toxicFault struct {
	spec  scenario.Fault
	toxic Toxic
	desc  string
}

// newToxicFault builds a toxic fault of the given Toxiproxy type; summary
// says what the attributes do ("2000ms ±100ms").
func newToxicFault(spec scenario.Fault, toxicType, summary string) (*toxicFault, error) {
	st, err := stream(spec)
	if err != nil {
		return nil, err
	}
	tox, err := toxicity(spec)
	if err != nil {
		return nil, err
	}
	attrs := make(map[string]any, len(spec.Attributes))
	for k, v := range spec.Attributes {
		attrs[k] = int64(v) // Toxiproxy reads every attribute as an integer.
	}
	desc := fmt.Sprintf("%s %s %s on %s", spec.Kind, summary, st, spec.Edge)
	if tox < 1 {
		desc += fmt.Sprintf(", toxicity %s", fmtNum(tox))
	}
	return &toxicFault{
		spec:  spec,
		toxic: Toxic{Name: ToxicName(spec.Name), Type: toxicType, Stream: st, Toxicity: float32(tox), Attributes: attrs},
		desc:  strings.Join(strings.Fields(desc), " "),
	}, nil
}

// Apply adds the toxic to every proxy of the edge; if one fails, it removes
// those already added.
func (f *toxicFault) Apply(ctx context.Context, env Env) error {
	proxies, err := proxiesFor(env, f.spec.Edge)
	if err != nil {
		return err
	}
	api := env.Toxics()
	for i, p := range proxies {
		if err := api.AddToxic(ctx, p, f.toxic); err != nil {
			return errors.Join(err, rollback(ctx, proxies[:i], func(ctx context.Context, p string) error {
				return api.RemoveToxic(ctx, p, f.toxic.Name)
			}))
		}
	}
	return nil
}

// Revert removes the toxic from every proxy of the edge; a toxic that is
// not there counts as removed.
func (f *toxicFault) Revert(ctx context.Context, env Env) error {
	proxies, err := proxiesFor(env, f.spec.Edge)
	if err != nil {
		return err
	}
	api := env.Toxics()
	var errs []error
	for _, p := range proxies {
		if err := api.RemoveToxic(ctx, p, f.toxic.Name); err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (f *toxicFault) Describe() string { return f.desc }

// proxiesFor resolves an edge to at least one proxy.
func proxiesFor(env Env, edge string) ([]string, error) {
	proxies, err := env.ProxiesFor(edge)
	if err != nil {
		return nil, fmt.Errorf("edge %s: %w", edge, err)
	}
	if len(proxies) == 0 {
		return nil, fmt.Errorf("edge %s has no proxies", edge)
	}
	return proxies, nil
}

// rollback undoes a partial apply on the given proxies, even if ctx is done.
func rollback(ctx context.Context, proxies []string, undo func(context.Context, string) error) error {
	if len(proxies) == 0 {
		return nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CleanupTimeout)
	defer cancel()
	var errs []error
	for _, p := range proxies {
		if err := undo(rctx, p); err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, fmt.Errorf("rollback: %w", err))
		}
	}
	return errors.Join(errs...)
}

// ms formats a millisecond attribute.
func ms(attrs map[string]float64, name string) string { return fmtNum(attrs[name]) + "ms" }
