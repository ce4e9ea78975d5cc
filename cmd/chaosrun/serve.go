package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/chaosrun/chaosrun/targets/bankservice"
	"github.com/chaosrun/chaosrun/targets/cachefront"
	"github.com/chaosrun/chaosrun/targets/kvdispatcher"
	"github.com/chaosrun/chaosrun/testbed/toxiserver"
)

// servers maps `chaosrun serve NAME` to what it runs.
var servers = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error{
	"toxiproxy":    toxiserver.Main,
	"bankservice":  bankservice.BankMain,
	"ledger":       bankservice.LedgerMain,
	"cachefront":   cachefront.Main,
	"vault":        bankservice.VaultMain,
	"kvdispatcher": kvdispatcher.DispatcherMain,
	"kvstore":      kvdispatcher.StoreMain,
}

// targetNames lists the reference targets a scenario may `run:`.
func targetNames() []string {
	var out []string
	for n := range servers {
		if n != "toxiproxy" {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func cmdServe(ctx context.Context, st *State, args []string) int {
	var all []string
	for n := range servers {
		all = append(all, n)
	}
	sort.Strings(all)
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(st.Stderr, "usage: chaosrun serve NAME [flags]  (NAME: %s)\n", strings.Join(all, ", "))
		return exitUsage
	}
	srv, ok := servers[args[0]]
	if !ok {
		fmt.Fprintf(st.Stderr, "chaosrun serve: unknown server %q (allowed: %s)\n", args[0], strings.Join(all, ", "))
		return exitUsage
	}
	err := srv(ctx, args[1:], st.Stdout, st.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun serve %s: %v\n", args[0], err)
		return exitUsage
	}
	return exitOK
}
