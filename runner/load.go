package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/workloads/k6run"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// load is the workload as one or more k6 processes ("shards", each running
// its own slice of every scenario through k6's execution segments), each
// streaming to its own receiver, so that a late or missing shard is known
// by name.
type load struct {
	shards []*shard
	// logs hold each shard's settled windows on disk until collect hands
	// them over.
	logs     stream.WindowLogs
	finished chan int // index of a shard whose k6 ended
	started  chan struct{}
}

type shard struct {
	idx  int
	name string
	recv *stream.Receiver
	out  k6outcome
	done bool
}

type k6outcome struct {
	res k6run.Result
	err error
}

// segments returns k6's --execution-segment flags for shard i of n.
func segments(i, n int) []string {
	if n <= 1 {
		return nil
	}
	seq := "0"
	for k := 1; k <= n; k++ {
		seq += "," + frac(k, n)
	}
	return []string{"--execution-segment", frac(i, n) + ":" + frac(i+1, n), "--execution-segment-sequence", seq}
}

func frac(k, n int) string {
	switch k {
	case 0:
		return "0"
	case n:
		return "1"
	}
	return fmt.Sprintf("%d/%d", k, n)
}

// shardListen is the listen address of shard i: a fixed port P becomes
// P+i; port 0 (a free one) and "" (loopback, free) stay as they are.
func shardListen(addr string, i int) (string, error) {
	if addr == "" || i == 0 {
		return addr, nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("listen address %q is not HOST:PORT: %w", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p+i > 65535 {
		return "", fmt.Errorf("listen port %q: want 0 (any free port) or a port with room for one per shard (P to P+%d)", port, i)
	}
	if p == 0 {
		return addr, nil
	}
	return net.JoinHostPort(host, strconv.Itoa(p+i)), nil
}

// startLoad starts n k6 processes; each ends when ctx ends. Their windows
// go to window logs in spillDir ("" is the system's temporary folder),
// keeping only the metrics keep says.
func startLoad(ctx context.Context, n int, spec k6run.Spec, logDir, spillDir string, keep func(string) bool, res Results) (*load, error) {
	l := &load{finished: make(chan int, n), started: make(chan struct{})}
	for i := range n {
		addr, err := shardListen(res.Listen, i)
		var wl *stream.WindowLog
		if err == nil {
			wl, err = stream.CreateWindowLog(spillDir)
		}
		if err == nil {
			l.logs = append(l.logs, wl)
			var recv *stream.Receiver
			recv, err = stream.ListenWith(ctx, stream.Config{Addr: addr, Token: res.Token, TLS: res.TLS, OnRefused: res.OnRefused, Log: wl, Keep: keep})
			if err == nil {
				l.shards = append(l.shards, &shard{idx: i, name: "k6", recv: recv})
			}
		}
		if err != nil {
			l.close()
			return nil, fmt.Errorf("results stream: %w", err)
		}
	}
	for i, sh := range l.shards {
		s := spec
		s.StreamAddr = sh.recv.DialAddr()
		s.StreamToken = res.Token
		s.StreamOptions = res.K6Options
		s.LogPath = filepath.Join(logDir, "k6.log")
		if n > 1 {
			sh.name = fmt.Sprintf("k6 shard %d of %d", i+1, n)
			s.LogPath = filepath.Join(logDir, fmt.Sprintf("k6-shard%d.log", i+1))
			s.Extra = append(append([]string(nil), spec.Extra...), segments(i, n)...)
		}
		if res.OnListen != nil {
			res.OnListen(sh.name, sh.recv.Addr())
		}
		go func() {
			out, rerr := k6run.Run(ctx, s)
			sh.out = k6outcome{out, rerr}
			l.finished <- sh.idx
		}()
	}
	// Load has started once every shard said hello.
	go func() {
		for _, sh := range l.shards {
			select {
			case <-sh.recv.Started():
			case <-ctx.Done():
				return
			}
		}
		close(l.started)
	}()
	return l, nil
}

// startTime is the earliest hello of all shards.
func (l *load) startTime() time.Time {
	var t time.Time
	for _, sh := range l.shards {
		if st := sh.recv.StartTime(); !st.IsZero() && (t.IsZero() || st.Before(t)) {
			t = st
		}
	}
	return t
}

// onWindow sends every shard's window messages to f.
func (l *load) onWindow(f func(record.Window)) {
	for _, sh := range l.shards {
		sh.recv.OnWindow(f)
	}
}

// note records that shard i ended and returns the problem, if any.
func (l *load) note(i int) error {
	sh := l.shards[i]
	sh.done = true
	switch {
	case sh.out.err != nil:
		return fmt.Errorf("%s: %w", sh.name, sh.out.err)
	case sh.out.res.ExitCode != 0 && !sh.out.res.ThresholdsFailed:
		return fmt.Errorf("%s exited with code %d%s", sh.name, sh.out.res.ExitCode, tailOf(sh.out.res))
	}
	return nil
}

// running reports how many shards have not ended.
func (l *load) running() int {
	n := 0
	for _, sh := range l.shards {
		if !sh.done {
			n++
		}
	}
	return n
}

// waitAll waits up to timeout for the shards still running to end.
func (l *load) waitAll(timeout time.Duration) error {
	deadline := time.After(timeout)
	for l.running() > 0 {
		select {
		case i := <-l.finished:
			l.note(i) //nolint:errcheck // the run is already stopping
		case <-deadline:
			return fmt.Errorf("%d k6 process(es) did not stop within %s of being told to", l.running(), timeout)
		}
	}
	return nil
}

// collect waits for every shard's end marker, closes the receivers and
// hands over their windows (logs, and what a failed log left in memory),
// read as one; a shard whose stream has no end marker is named.
func (l *load) collect(wait time.Duration) (stream.Spilled, []string, error) {
	var errs []error
	var notes []string
	var held []record.Window
	deadline := time.Now().Add(wait)
	for _, sh := range l.shards {
		if !sh.recv.WaitEnded(time.Until(deadline)) {
			errs = append(errs, fmt.Errorf("the results stream of %s ended without its end marker: it stopped early", sh.name))
		}
		sh.recv.Close()
		sum := sh.recv.Summary()
		if sum.Malformed > 0 {
			notes = append(notes, fmt.Sprintf("results stream of %s: %d malformed lines ignored (first: %v)", sh.name, sum.Malformed, sum.Errors[0]))
		}
		if sum.Refused > 0 {
			notes = append(notes, fmt.Sprintf("results stream of %s: refused %d connection(s) (first: %v)", sh.name, sum.Refused, sum.RefusedErrors[0]))
		}
		if sum.Dropped > 0 {
			notes = append(notes, fmt.Sprintf("results stream of %s: the output dropped %d samples", sh.name, sum.Dropped))
		}
		if sum.LogErr != nil {
			errs = append(errs, fmt.Errorf("results of %s: %w", sh.name, sum.LogErr))
		}
		held = append(held, sum.Windows...)
	}
	sp := stream.Spilled{Logs: l.logs, Held: held}
	l.logs = nil
	return sp, notes, errors.Join(errs...)
}

// close closes the receivers, and the window logs unless collect handed
// them over.
func (l *load) close() {
	for _, sh := range l.shards {
		sh.recv.Close()
	}
	l.logs.Close() //nolint:errcheck // nothing more to lose
	l.logs = nil
}
