// Package doctor checks what runs need (Docker and the images for the
// Docker testbed; k6, only for workloads with engine: k6) and says what to
// fix about each problem.
package doctor

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/chaosrun/chaosrun/testbed/docker"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// Check writes a line per finding to w, with what to do about each
// problem, and returns how many problems there are. k6's absence is a
// note, not a problem: native workloads run without it.
func Check(ctx context.Context, w io.Writer, k6 k6build.Options) int {
	problems := 0
	for _, f := range docker.Checkup(ctx) {
		if f.Fix == "" {
			fmt.Fprintf(w, "ok   %-8s %s\n", f.What, f.Detail)
			continue
		}
		problems++
		fmt.Fprintf(w, "FIX  %-8s %s\n              → %s\n", f.What, f.Detail, f.Fix)
	}
	f := K6(k6)
	if f.Fix == "" {
		fmt.Fprintf(w, "ok   %-8s %s\n", f.What, f.Detail)
	} else {
		fmt.Fprintf(w, "note %-8s %s (needed only for workloads with engine: k6; native workloads run without it)\n              → %s\n", f.What, f.Detail, f.Fix)
	}
	if problems > 0 {
		fmt.Fprintf(w, "%d problem(s)\n", problems)
	} else {
		fmt.Fprintln(w, "all good")
	}
	return problems
}

// K6 says whether k6 is built for the extension's current source (the
// checkout's, else the one embedded in this binary).
func K6(o k6build.Options) docker.Finding {
	path, err := o.CachedK6()
	if err != nil {
		return docker.Finding{What: "k6", Detail: err.Error(), Fix: "point CHAOSRUN_ROOT at the repository, or unset it to build from the sources embedded in chaosrun"}
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode()&0o111 == 0 {
		return docker.Finding{What: "k6", Detail: "no k6 " + k6build.K6Version + " with xk6-resilience built for this extension source yet",
			Fix: "the next run of an engine: k6 workload builds it (a cold build takes a few minutes), or pass --k6 PATH"}
	}
	return docker.Finding{What: "k6", Detail: path}
}
