// Package servers names the programs `chaosrun serve NAME` runs: the
// reference targets and the embedded Toxiproxy. Testbeds start them by name.
package servers

import (
	"context"
	"io"
	"slices"

	"github.com/chaosrun/chaosrun/servers/names"
	"github.com/chaosrun/chaosrun/targets/bankservice"
	"github.com/chaosrun/chaosrun/targets/cachefront"
	"github.com/chaosrun/chaosrun/targets/kvdispatcher"
	"github.com/chaosrun/chaosrun/testbed/relay"
	"github.com/chaosrun/chaosrun/testbed/toxiserver"
)

// Main is a server's entry point: it parses args as its flags and serves
// until ctx ends.
type Main func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// Toxiproxy is the embedded Toxiproxy's name; every other server is a
// reference target.
const Toxiproxy = names.Toxiproxy

// Relay forwards TCP connections on the Docker testbed (testbed/relay).
const Relay = names.Relay

var mains = map[string]Main{
	Toxiproxy:      toxiserver.Main,
	Relay:          relay.Main,
	"bankservice":  bankservice.BankMain,
	"ledger":       bankservice.LedgerMain,
	"cachefront":   cachefront.Main,
	"vault":        bankservice.VaultMain,
	"kvdispatcher": kvdispatcher.DispatcherMain,
	"kvstore":      kvdispatcher.StoreMain,
}

// Lookup returns the server called name.
func Lookup(name string) (Main, bool) {
	m, ok := mains[name]
	return m, ok
}

// Names lists every server, sorted.
func Names() []string {
	out := make([]string, 0, len(mains))
	for n := range mains {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Targets lists the reference targets, sorted: the names a scenario's
// `run:` may take (names.Targets, which the loader reads without linking
// the servers).
func Targets() []string { return names.Targets() }
