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

// ErrGone is a revert's only failure when the toxic was no longer there:
// the run removes its toxics only by reverting them, so something outside
// the run did, and the fault may not have been in force for its window.
var ErrGone = errors.New("the toxic was already gone before its revert: something outside the run removed it, so the fault may not have been in force for its whole window")

// ErrTampered is a revert's failure when the proxies' toxics, read back
// before it, are not what the run set: its toxic changed, or a toxic the
// run did not add is there. The fault's window did not hold what the
// scenario says.
var ErrTampered = errors.New("the proxy's toxics were not what the run set")

// Revert removes the toxic from every proxy of the edge. First, when the
// API reads toxics back, it checks them (ErrTampered). A toxic that is not
// there is removed all the same, and reported as ErrGone when nothing else
// failed.
func (f *toxicFault) Revert(ctx context.Context, env Env) error {
	proxies, err := proxiesFor(env, f.spec.Edge)
	if err != nil {
		return err
	}
	api := env.Toxics()
	tampered := f.check(ctx, api, proxies, scriptsAddToxics(env))
	if err := f.remove(ctx, api, proxies); err != nil || tampered != nil {
		return errors.Join(tampered, err)
	}
	return nil
}

// check reads the proxies' toxics back, when api can: the fault's toxic
// changed, or one the run did not add (not named chaosrun-*; unless
// scripts, the load's own script, may add toxics), is ErrTampered naming
// what it found. A read that fails says nothing.
func (f *toxicFault) check(ctx context.Context, api ToxicAPI, proxies []string, scripts bool) error {
	lister, ok := api.(ToxicLister)
	if !ok {
		return nil
	}
	var found []string
	for _, p := range proxies {
		toxics, err := lister.ListToxics(ctx, p)
		if err != nil {
			return nil
		}
		for _, t := range toxics {
			switch {
			case !strings.HasPrefix(t.Name, ToxicName("")) && !scripts:
				found = append(found, fmt.Sprintf("%s toxic %q added to %s by something outside the run", t.Type, t.Name, p))
			case t.Name == f.toxic.Name && !sameToxic(t, f.toxic):
				found = append(found, fmt.Sprintf("toxic %s on %s changed to %s %s toxicity %g %v", t.Name, p, t.Type, t.Stream, t.Toxicity, t.Attributes))
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrTampered, strings.Join(found, "; "))
}

// scriptsAddToxics says the run's load may add toxics of its own (see
// ScenarioEnv.ScriptsAddToxics); an Env that does not say is taken to.
func scriptsAddToxics(env Env) bool {
	if o, ok := env.(interface{ ScriptsAddToxics() bool }); ok {
		return o.ScriptsAddToxics()
	}
	return true
}

// sameToxic says a toxic read back is the one the run set: attributes it
// set compare as numbers (JSON reads them back as floats). Those it did
// not set are Toxiproxy's zero defaults for a TCP toxic; the HTTP stage
// reads back more than it was given (its counters, its seed), so for an
// HTTP toxic only what the run set is compared.
func sameToxic(got, set Toxic) bool {
	if got.Type != set.Type || got.Stream != set.Stream || got.Toxicity != set.Toxicity {
		return false
	}
	for k, want := range set.Attributes {
		if fmt.Sprint(got.Attributes[k]) != fmt.Sprint(want) {
			return false
		}
	}
	if StageOf(set.Type) == scenario.StageHTTP {
		return true // the stage's toxics read back their seed and defaults too
	}
	for k, v := range got.Attributes {
		if _, ok := set.Attributes[k]; !ok && fmt.Sprint(v) != "0" {
			return false
		}
	}
	return true
}

// remove removes the toxic from every proxy; see Revert.
func (f *toxicFault) remove(ctx context.Context, api ToxicAPI, proxies []string) error {
	var errs []error
	var gone []string
	for _, p := range proxies {
		switch err := api.RemoveToxic(ctx, p, f.toxic.Name); {
		case errors.Is(err, ErrNotFound):
			gone = append(gone, p)
		case err != nil:
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 && len(gone) > 0 {
		return fmt.Errorf("%w (toxic %s on %s)", ErrGone, f.toxic.Name, strings.Join(gone, ", "))
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
