// Package resilience is the xk6-resilience k6 extension: the JavaScript module
// k6/x/resilience and the "resilience" output, which aggregates every metric
// sample into one-second windows of per-series counters and HDR histograms and
// streams them as JSON lines to a loopback socket or a file.
//
// xk6 blank-imports this package, so everything registers from here.
package resilience

import (
	"runtime/debug"

	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/output"
)

// Version is the extension's version, reported by version() and in the
// stream's hello message.
const Version = "v0.1.0"

func init() {
	modules.Register("k6/x/resilience", new(RootModule))
	output.RegisterExtension("resilience", New)
}

// RootModule is the global k6/x/resilience module; it makes one ModuleInstance per VU.
type RootModule struct{}

// ModuleInstance is the k6/x/resilience module as one VU sees it.
type ModuleInstance struct {
	vu modules.VU
}

var (
	_ modules.Module   = new(RootModule)
	_ modules.Instance = new(ModuleInstance)
)

// NewModuleInstance returns the module's instance for one VU.
func (*RootModule) NewModuleInstance(vu modules.VU) modules.Instance {
	return &ModuleInstance{vu: vu}
}

// Exports lists what JavaScript sees in k6/x/resilience.
func (mi *ModuleInstance) Exports() modules.Exports {
	return modules.Exports{Named: map[string]any{
		"version": mi.Version,
	}}
}

// Version returns the extension's version string.
func (*ModuleInstance) Version() string { return Version }

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
