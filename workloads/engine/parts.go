package engine

import (
	"maps"
	"slices"
	"sync"

	"github.com/chaosrun/chaosrun/record"
)

// partLog keeps how each shard's process ran, for the record's load
// parts: its PID from when it starts (so that a process that never ends
// is still named), how it ended once it did. Safe for concurrent use.
type partLog struct {
	mu    sync.Mutex
	parts map[int]record.LoadPart
}

// started notes shard sh's process pid.
func (p *partLog) started(sh Shard, pid int) {
	p.update(sh, func(lp *record.LoadPart) { lp.PID = pid })
}

// update changes shard sh's part with f.
func (p *partLog) update(sh Shard, f func(*record.LoadPart)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.parts == nil {
		p.parts = map[int]record.LoadPart{}
	}
	lp, ok := p.parts[sh.Index]
	if !ok {
		lp = record.LoadPart{Name: sh.Name, ExitCode: -1}
	}
	f(&lp)
	p.parts[sh.Index] = lp
}

// list is the parts in shard order.
func (p *partLog) list() []record.LoadPart {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []record.LoadPart
	for _, i := range slices.Sorted(maps.Keys(p.parts)) {
		out = append(out, p.parts[i])
	}
	return out
}
