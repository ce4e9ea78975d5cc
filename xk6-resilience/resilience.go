// Package resilience is the xk6-resilience k6 extension: the JavaScript module
// k6/x/resilience (client behaviour models, key streams, arrival shapes,
// deadline and criticality headers, Toxiproxy control) and the "resilience"
// output, which aggregates every metric sample into one-second windows of
// per-series counters and HDR histograms and streams them as JSON lines to a
// loopback socket or a file.
//
// xk6 blank-imports this package, so everything registers from here.
package resilience

import (
	"runtime/debug"

	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/output"

	"github.com/chaosrun/chaosrun/models/client"
)

// Version is the extension's version, reported by version() and in the
// stream's hello message.
const Version = "v0.2.0"

func init() {
	modules.Register("k6/x/resilience", new(RootModule))
	output.RegisterExtension("resilience", New)
}

// RootModule is the global k6/x/resilience module; it makes one ModuleInstance per VU.
type RootModule struct{}

var (
	_ modules.Module   = new(RootModule)
	_ modules.Instance = new(ModuleInstance)
)

// NewModuleInstance returns the module's instance for one VU. It registers
// the extension's metrics in the VU's registry (the same metrics for every VU).
func (*RootModule) NewModuleInstance(vu modules.VU) modules.Instance {
	mi := &ModuleInstance{vu: vu, names: client.DefaultHeaderNames}
	if env := vu.InitEnv(); env != nil {
		m, err := registerMetrics(env.Registry)
		if err != nil {
			panic(vu.Runtime().NewGoError(err))
		}
		mi.metrics = m
	}
	return mi
}

// k6Version is the version of go.k6.io/k6 this binary was built with, or ""
// when the build information does not say.
func k6Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	if info.Main.Path == "go.k6.io/k6" {
		return info.Main.Version
	}
	for _, d := range info.Deps {
		if d.Path == "go.k6.io/k6" {
			if d.Replace != nil && d.Replace.Version != "" {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return ""
}
