package engine

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// Shard says where one load process streams its results.
type Shard struct {
	// Index is the shard's number, 0 to Count-1.
	Index, Count int
	// Name is how messages name the shard ("k6", "k6 shard 2 of 3").
	Name string
	// StreamAddr, StreamToken and StreamOptions reach the shard's receiver.
	// StreamToken is always set, on loopback too: the run's token, which
	// the process sends in its hello (k6: K6_RESILIENCE_TOKEN). Without it
	// the receiver refuses the stream.
	StreamAddr    string
	StreamToken   string
	StreamOptions url.Values
	// LogPath receives the process's output.
	LogPath string
}

// ShardRunner runs one shard of a workload as a process that streams its
// windows to a results receiver.
type ShardRunner interface {
	// Name names the engine's processes in messages ("k6").
	Name() string
	// RunShard runs the shard until it ends or ctx ends; the error says why
	// it failed, nil for a clean end.
	RunShard(ctx context.Context, sh Shard) error
}

// shardedLoad is a workload as one or more processes ("shards", each running
// its own slice of every arrival), each streaming to its own receiver, so
// that a late or missing shard is known by name.
type shardedLoad struct {
	engine ShardRunner
	n      int
	logDir string
	spill  string
	keep   func(string) bool
	res    Results
	// token is the run's results token: res.Token, or one made for the run.
	token string

	shards []*shardState
	// logs hold each shard's settled windows on disk until Collect hands
	// them over.
	logs stream.WindowLogs
	// copies hold each shard's stream as received, a results file that
	// `chaosrun judge` reads (logs/results*.jsonl).
	copies   []*resultsCopy
	ended    chan error
	started  chan struct{}
	onWindow []func(record.Window)
	cancel   context.CancelFunc

	mu      sync.Mutex
	running int
}

type shardState struct {
	Shard
	recv *stream.Receiver
}

// NewShardedLoad makes a load of n processes of engine, each with its own
// receiver; windows spill to logs in spec.OutDir. The receivers take only
// streams that show res.Token, or a token made for this run when it is
// empty, which every shard is given.
func NewShardedLoad(engine ShardRunner, n int, spec LoadSpec, res Results) Load {
	token := res.Token
	if token == "" {
		token = stream.NewToken()
	}
	return &shardedLoad{engine: engine, n: max(n, 1), logDir: filepath.Join(spec.OutDir, "logs"), spill: spec.OutDir,
		keep: spec.Keep, res: res, token: token, started: make(chan struct{})}
}

func (l *shardedLoad) Started() <-chan struct{}       { return l.started }
func (l *shardedLoad) Ended() <-chan error            { return l.ended }
func (l *shardedLoad) OnWindow(f func(record.Window)) { l.onWindow = append(l.onWindow, f) }

// Start opens a receiver per shard and starts its process; each ends when
// ctx ends or Stop is called.
func (l *shardedLoad) Start(ctx context.Context) error {
	ctx, l.cancel = context.WithCancel(ctx)
	l.ended = make(chan error, l.n)
	for i := range l.n {
		if err := l.listen(ctx, i); err != nil {
			l.Close()
			return fmt.Errorf("results stream: %w", err)
		}
	}
	l.running = len(l.shards)
	var wg sync.WaitGroup
	for _, sh := range l.shards {
		if l.res.OnListen != nil {
			l.res.OnListen(sh.Name, sh.recv.Addr())
		}
		wg.Go(func() {
			err := l.engine.RunShard(ctx, sh.Shard)
			if err != nil {
				err = fmt.Errorf("%s: %w", sh.Name, err)
			}
			l.mu.Lock()
			l.running--
			l.mu.Unlock()
			l.ended <- err
		})
	}
	go func() {
		wg.Wait()
		close(l.ended)
	}()
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
	return nil
}

func (l *shardedLoad) listen(ctx context.Context, i int) error {
	addr, err := shardListen(l.res.Listen, i)
	if err != nil {
		return err
	}
	wl, err := stream.CreateWindowLog(l.spill)
	if err != nil {
		return err
	}
	l.logs = append(l.logs, wl)
	name := "results.jsonl"
	if l.n > 1 {
		name = fmt.Sprintf("results-shard%d.jsonl", i+1)
	}
	cp, err := createCopy(filepath.Join(l.logDir, name))
	if err != nil {
		return err
	}
	l.copies = append(l.copies, cp)
	recv, err := stream.ListenWith(ctx, stream.Config{Addr: addr, Token: l.token, TLS: l.res.TLS, OnRefused: l.res.OnRefused, Log: wl, Keep: l.keep, Copy: cp, HelloTimeout: l.res.HelloTimeout})
	if err != nil {
		return err
	}
	for _, f := range l.onWindow {
		recv.OnWindow(f)
	}
	sh := Shard{Index: i, Count: l.n, Name: l.engine.Name(), StreamAddr: recv.DialAddr(), StreamToken: l.token,
		StreamOptions: l.res.K6Options, LogPath: filepath.Join(l.logDir, l.engine.Name()+".log")}
	if l.n > 1 {
		sh.Name = fmt.Sprintf("%s shard %d of %d", l.engine.Name(), i+1, l.n)
		sh.LogPath = filepath.Join(l.logDir, fmt.Sprintf("%s-shard%d.log", l.engine.Name(), i+1))
	}
	l.shards = append(l.shards, &shardState{Shard: sh, recv: recv})
	return nil
}

// Parts are how the shards' processes ran, when the engine says
// (PartsReporter).
func (l *shardedLoad) Parts() []record.LoadPart {
	if pr, ok := l.engine.(PartsReporter); ok {
		return pr.Parts()
	}
	return nil
}

// PartCount is how many shards send windows.
func (l *shardedLoad) PartCount() int { return l.n }

// StartTime is the earliest hello of all shards.
func (l *shardedLoad) StartTime() time.Time {
	var t time.Time
	for _, sh := range l.shards {
		if st := sh.recv.StartTime(); !st.IsZero() && (t.IsZero() || st.Before(t)) {
			t = st
		}
	}
	return t
}

// runningCount is how many shards have not ended.
func (l *shardedLoad) runningCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running
}

// Stop tells every shard to stop.
func (l *shardedLoad) Stop() {
	if l.cancel != nil {
		l.cancel()
	}
}

// Wait waits up to d for the shards still running to end. The ends it
// takes are no longer on Ended.
func (l *shardedLoad) Wait(d time.Duration) error {
	if l.ended == nil {
		return nil
	}
	deadline := time.After(d)
	for {
		select {
		case _, ok := <-l.ended:
			if !ok {
				return nil
			}
		case <-deadline:
			return fmt.Errorf("%d %s process(es) did not stop within %s of being told to", l.runningCount(), l.engine.Name(), d)
		}
	}
}

// Collect waits for every shard's end marker, closes the receivers and
// hands over their windows (logs, and what a failed log left in memory),
// read as one; a shard whose stream has no end marker is named.
func (l *shardedLoad) Collect(wait time.Duration) (record.WindowSource, []string, error) {
	var errs []error
	var notes []string
	var held []record.Window
	deadline := time.Now().Add(wait)
	for _, sh := range l.shards {
		if !sh.recv.WaitEnded(time.Until(deadline)) {
			errs = append(errs, fmt.Errorf("the results stream of %s ended without its end marker: it stopped early", sh.Name))
		}
		sh.recv.Close()
		sum := sh.recv.Summary()
		notes = append(notes, streamNotes(sh.Name, sum)...)
		if sum.LogErr != nil {
			errs = append(errs, fmt.Errorf("results of %s: %w", sh.Name, sum.LogErr))
		}
		held = append(held, sum.Windows...)
		if sum.CopyErr != nil {
			notes = append(notes, fmt.Sprintf("results of %s: %v", sh.Name, sum.CopyErr))
		}
	}
	if err := l.closeCopies(); err != nil {
		notes = append(notes, err.Error())
	}
	sp := stream.Spilled{Logs: l.logs, Held: held}
	l.logs = nil
	return sp, notes, errors.Join(errs...)
}

// streamNotes are the problems of one shard's results stream for the
// record: malformed lines, refused connections by reason, reconnects,
// samples the output dropped.
func streamNotes(shard string, sum stream.Summary) []string {
	var notes []string
	if sum.Malformed > 0 {
		notes = append(notes, fmt.Sprintf("results stream of %s: %d malformed lines ignored (first: %v)", shard, sum.Malformed, sum.Errors[0]))
	}
	if sum.Refused > 0 {
		notes = append(notes, fmt.Sprintf("results stream of %s: refused %d connection(s): %s (first: %v)", shard, sum.Refused, byCount(sum.RefusedByReason), sum.RefusedErrors[0]))
	}
	if sum.Streams > 1 {
		notes = append(notes, fmt.Sprintf("results stream of %s: the stream reconnected %d time(s)", shard, sum.Streams-1))
	}
	if sum.Dropped > 0 {
		notes = append(notes, fmt.Sprintf("results stream of %s: the output dropped %d samples", shard, sum.Dropped))
	}
	return notes
}

// byCount lists counts by reason, the largest first: "1000 no hello, 2 …".
func byCount(m map[string]int) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b)) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", m[k], k)
	}
	return strings.Join(parts, ", ")
}

// Close closes the receivers, and the window logs unless Collect handed
// them over.
func (l *shardedLoad) Close() {
	l.Stop()
	for _, sh := range l.shards {
		sh.recv.Close()
	}
	l.logs.Close() //nolint:errcheck // nothing more to lose
	l.logs = nil
	l.closeCopies() //nolint:errcheck // nothing more to lose
}

// resultsCopy is a shard's stream kept as a results file.
type resultsCopy struct {
	*bufio.Writer
	f *os.File
}

func createCopy(path string) (*resultsCopy, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("results copy: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("results copy: %w", err)
	}
	return &resultsCopy{Writer: bufio.NewWriterSize(f, 64<<10), f: f}, nil
}

// closeCopies flushes and closes the shards' results files, once the
// receivers are closed.
func (l *shardedLoad) closeCopies() error {
	var errs []error
	for _, c := range l.copies {
		if err := errors.Join(c.Flush(), c.f.Close()); err != nil {
			errs = append(errs, fmt.Errorf("results copy %s: %w", c.f.Name(), err))
		}
	}
	l.copies = nil
	return errors.Join(errs...)
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
