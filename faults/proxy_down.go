package faults

import (
	"context"
	"errors"

	"github.com/chaosrun/chaosrun/scenario"
)

func init() {
	Register("proxy_down", func(spec scenario.Fault) (Fault, error) {
		return &proxyDown{edge: spec.Edge}, nil
	})
}

// proxyDown disables every proxy of an edge: new connections are refused and
// open ones dropped until the fault is reverted.
type proxyDown struct{ edge string }

func (f *proxyDown) Apply(ctx context.Context, env Env) error {
	proxies, err := proxiesFor(env, f.edge)
	if err != nil {
		return err
	}
	api := env.Toxics()
	for i, p := range proxies {
		if err := api.SetProxyEnabled(ctx, p, false); err != nil {
			return errors.Join(err, rollback(ctx, proxies[:i], func(ctx context.Context, p string) error {
				return api.SetProxyEnabled(ctx, p, true)
			}))
		}
	}
	return nil
}

func (f *proxyDown) Revert(ctx context.Context, env Env) error {
	proxies, err := proxiesFor(env, f.edge)
	if err != nil {
		return err
	}
	api := env.Toxics()
	var errs []error
	for _, p := range proxies {
		if err := api.SetProxyEnabled(ctx, p, true); err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (f *proxyDown) Describe() string { return "proxy_down on " + f.edge }
