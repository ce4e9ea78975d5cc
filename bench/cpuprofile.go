package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/pprof/profile"
)

// cpuPart is one share of the load process's CPU, named by where it goes.
type cpuPart struct {
	key, name string
	// match reports whether a stack (leaf first) spent its sample here.
	match func(stack []string) bool
}

func anyFrame(prefixes ...string) func([]string) bool {
	return func(stack []string) bool {
		for _, f := range stack {
			for _, p := range prefixes {
				if strings.HasPrefix(f, p) {
					return true
				}
			}
		}
		return false
	}
}

// The engine's packages, as a profile names their functions.
const (
	nativePkg = "github.com/chaosrun/chaosrun/workloads/native"
	h1Pkg     = nativePkg + "/h1"
	rawioPkg  = nativePkg + "/rawio"
)

// cpuParts are tried in order; a sample counts in the first that matches,
// and in "engine" when none does. The timer comes first: its read is a
// raw read too.
var cpuParts = []cpuPart{
	{"sleep", "the dispatcher's timer (timerfd)", anyFrame(nativePkg + ".(*sleeper)")},
	{"write", "the request's write (on loopback it also delivers the request and wakes the server)", anyFrame(rawioPkg+".(*op).writeAll", "syscall.write")},
	{"read", "reads of the answer", anyFrame(rawioPkg+".(*op).readOnce", "syscall.read")},
	{"netpoll", "the Go scheduler waiting on sockets (epoll)", anyFrame("runtime.netpoll")},
	{"scheduler", "the Go scheduler finding, stealing and parking work (futex, spinning)", anyFrame("runtime.findRunnable", "runtime.schedule", "runtime.wakep", "runtime.futex", "runtime.mstart")},
	{"gc", "garbage collection", anyFrame("runtime.gcBgMarkWorker", "runtime.gcAssist", "runtime.bgsweep", "runtime.bgscavenge")},
}

// splitCPU reads a CPU profile and sums its samples' time by cpuParts
// (and "engine" for the rest), in seconds, with the total.
func splitCPU(path string) (map[string]float64, float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			idx = i
		}
	}
	if idx < 0 {
		return nil, 0, fmt.Errorf("%s: no cpu/nanoseconds samples", path)
	}
	parts := map[string]float64{}
	var total float64
	for _, s := range p.Sample {
		var stack []string
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				if ln.Function != nil {
					stack = append(stack, ln.Function.Name)
				}
			}
		}
		secs := float64(s.Value[idx]) / 1e9
		total += secs
		key := "engine"
		for _, part := range cpuParts {
			if part.match(stack) {
				key = part.key
				break
			}
		}
		parts[key] += secs
	}
	return parts, total, nil
}

// nativeProfileRows runs the bare native arm at rate for three steps with
// the load process profiled and says where its CPU per request goes, each
// part against the profiled total per request.
func (b *bench) nativeProfileRows(ctx context.Context, rate int) ([]Row, map[string]any, error) {
	path := filepath.Join(b.tmp, "native-cpu.pprof")
	defer os.Remove(path)
	spec := nativeStepSpec(b.server.URL(), rate, 3*b.cfg.step, false)
	sum, res, err := b.nativeRun(ctx, spec, nil, "--cpu-profile", path)
	if err != nil {
		return nil, nil, err
	}
	load, warm := totalsOf(sum.Windows, nativeLoad), totalsOf(sum.Windows, nativeWarmup)
	sent := load.reqs + warm.reqs
	if sent == 0 {
		return nil, nil, fmt.Errorf("profiled native run at %d/s sent nothing", rate)
	}
	parts, total, err := splitCPU(path)
	if err != nil {
		return nil, nil, err
	}
	perReqUs := func(secs float64) float64 { return secs * 1e6 / float64(sent) }
	ref := fmt.Sprintf("(f) profiled, per request at %d/s", rate)
	var rows []Row
	detail := map[string]any{"rate": rate, "requests": sent, "profiled_us_per_req": perReqUs(total),
		"rusage_us_per_req": perReq(res.CPU, sent)}
	for _, part := range append(cpuParts, cpuPart{key: "engine", name: "the engine's own work (keys, request, answer, windows, stream)"}) {
		us := perReqUs(parts[part.key])
		detail[part.key+"_us_per_req"] = us
		rows = append(rows, Row{Name: fmt.Sprintf("(f) CPU per request at %d/s: %s", rate, part.name), Value: us, Unit: "µs",
			Ref: ref, RefValue: perReqUs(total)})
	}
	return rows, detail, nil
}
