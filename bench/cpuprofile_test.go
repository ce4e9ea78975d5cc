package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"
)

// TestSplitCPU sorts a profile's samples by where their stacks spent the
// time: the first part that matches, "engine" for the rest.
func TestSplitCPU(t *testing.T) {
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}}
	fn := map[string]*profile.Function{}
	loc := func(names ...string) []*profile.Location { // leaf first
		var locs []*profile.Location
		for _, n := range names {
			if fn[n] == nil {
				fn[n] = &profile.Function{ID: uint64(len(fn) + 1), Name: n}
				p.Function = append(p.Function, fn[n])
			}
			l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn[n]}}}
			p.Location = append(p.Location, l)
			locs = append(locs, l)
		}
		return locs
	}
	add := func(ms int64, names ...string) {
		p.Sample = append(p.Sample, &profile.Sample{Value: []int64{1, ms * 1e6}, Location: loc(names...)})
	}
	add(20, "internal/runtime/syscall/linux.Syscall6", "syscall.RawSyscall", rawioPkg+".(*op).writeAll", rawioPkg+".(*op).writeAll-fm", "internal/poll.(*FD).RawWrite", h1Pkg+".(*Host).Do")
	add(10, "internal/runtime/syscall/linux.Syscall6", "syscall.write", "net.(*conn).Write", h1Pkg+".(*Host).Do")
	add(4, "syscall.RawSyscall", rawioPkg+".(*op).readOnce", "internal/poll.(*FD).RawRead")
	add(1, "syscall.read", "net.(*conn).Read")
	add(7, "internal/runtime/syscall/linux.EpollWait", "runtime.netpoll", "runtime.findRunnable", "runtime.schedule")
	add(4, "runtime.futex", "runtime.futexsleep", "runtime.stopm", "runtime.findRunnable")
	add(2, "syscall.RawSyscall6", nativePkg+".(*sleeper).sleep", nativePkg+".sleepUntil")
	add(1, "syscall.RawSyscall", rawioPkg+".(*op).readOnce", rawioPkg+".(*IO).Read", nativePkg+".(*sleeper).sleep")
	add(1, "runtime.gcDrain", "runtime.gcBgMarkWorker")
	add(3, nativePkg+".(*lane).prepareDraw", nativePkg+".(*worker).serve")
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	parts, total, err := splitCPU(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"write": 0.030, "read": 0.005, "netpoll": 0.007, "scheduler": 0.004, "sleep": 0.003, "gc": 0.001, "engine": 0.003}
	for k, v := range want {
		if d := parts[k] - v; d > 1e-12 || d < -1e-12 {
			t.Errorf("%s: %v s, want %v", k, parts[k], v)
		}
	}
	if d := total - 0.053; d > 1e-12 || d < -1e-12 || len(parts) != len(want) {
		t.Errorf("total %v s in %d parts, want 0.053 in %d", total, len(parts), len(want))
	}
	if _, _, err := splitCPU(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing profile: no error")
	}
}
