// Package doctor checks what runs need (Docker and the images for the
// Docker testbed; k6, only for workloads with engine: k6) and says what to
// fix about each problem.
package doctor

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	dockerpkg "github.com/chaosrun/chaosrun/testbed/docker"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// Run checks what runs on testbed ("local" or "docker") need, writes the
// findings to w and ends with exit 1 when one of them is a problem, 2 for
// an unknown testbed. The local testbed needs nothing but this binary and
// loopback; Docker's findings are notes unless testbed is "docker". It
// gives up on the engine after ten seconds.
func Run(ctx context.Context, w io.Writer, k6 k6build.Options, testbed string) error {
	if testbed != "local" && testbed != "docker" {
		return exitcode.Failf(exitcode.Usage, "--testbed %q (allowed: local, docker)", testbed)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if Check(ctx, w, k6, testbed == "docker") > 0 {
		return exitcode.Exit(exitcode.Breach)
	}
	return nil
}

// Check writes a line per finding to w, with what to do about each
// problem, and returns how many problems there are: the local testbed's
// always, Docker's when docker is set (else they are notes, as k6's
// absence is: native workloads run without it).
func Check(ctx context.Context, w io.Writer, k6 k6build.Options, docker bool) int {
	problems := 0
	fmt.Fprintln(w, "local testbed (the default):")
	problems += report(w, Local(), true, "")
	fmt.Fprintln(w, "docker testbed (--testbed docker):")
	for _, f := range dockerpkg.Checkup(ctx) {
		problems += report(w, f, docker, "needed only for --testbed docker")
	}
	fmt.Fprintln(w, "k6 (engine: k6):")
	problems += report(w, K6(k6), false, "needed only for workloads with engine: k6; native workloads run without it")
	if problems > 0 {
		fmt.Fprintf(w, "%d problem(s)\n", problems)
	} else {
		fmt.Fprintln(w, "all good")
	}
	return problems
}

// report writes one finding: ok, a problem (FIX, counted 1) when it
// counts, else a note saying when it is needed.
func report(w io.Writer, f dockerpkg.Finding, counts bool, when string) int {
	switch {
	case f.Fix == "":
		fmt.Fprintf(w, "  ok   %-8s %s\n", f.What, f.Detail)
		return 0
	case counts:
		fmt.Fprintf(w, "  FIX  %-8s %s\n               → %s\n", f.What, f.Detail, f.Fix)
		return 1
	}
	fmt.Fprintf(w, "  note %-8s %s (%s)\n               → %s\n", f.What, f.Detail, when, f.Fix)
	return 0
}

// Local checks what the local testbed needs beyond this binary (the
// reference targets and Toxiproxy are in it): a port to listen on on
// loopback.
func Local() dockerpkg.Finding {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return dockerpkg.Finding{What: "loopback", Detail: err.Error(), Fix: "the local testbed listens on 127.0.0.1: allow it (a sandbox or firewall may block it)"}
	}
	ln.Close()
	return dockerpkg.Finding{What: "loopback", Detail: "services, Toxiproxy and the load listen on 127.0.0.1; the targets and Toxiproxy are built into chaosrun"}
}

// K6 says whether k6 is built for the extension's current source (the
// checkout's, else the one embedded in this binary).
func K6(o k6build.Options) dockerpkg.Finding {
	path, err := o.CachedK6()
	if err != nil {
		return dockerpkg.Finding{What: "k6", Detail: err.Error(), Fix: "point CHAOSRUN_ROOT at the repository, or unset it to build from the sources embedded in chaosrun"}
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode()&0o111 == 0 {
		return dockerpkg.Finding{What: "k6", Detail: "no k6 " + k6build.K6Version + " with xk6-resilience built for this extension source yet",
			Fix: "the next run of an engine: k6 workload builds it (a cold build takes a few minutes), or pass --k6 PATH"}
	}
	return dockerpkg.Finding{What: "k6", Detail: path}
}
