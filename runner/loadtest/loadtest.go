// Package loadtest has a fake load and a fake testbed, so that a session's
// every path — load dies, a service dies, a signal, the wall-clock limit, a
// breach — is tested in milliseconds without k6 or processes.
package loadtest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/testbed"
	"github.com/chaosrun/chaosrun/workloads/engine"
)

// Load is a fake load: it starts after StartAfter, sends Windows one by one
// (one second apart, the first at the start it reports: whole seconds in
// the past, so that the windows lie inside the run) and then ends after
// RunFor with Err. With NeverStart it never says hello; with IgnoreStop it
// does not end when told to. Every paces the windows: one each Every of
// wall time (a second of load in less), until it is told to stop.
type Load struct {
	StartAfter time.Duration
	RunFor     time.Duration
	// Windows are the series of each second of load.
	Windows [][]record.Series
	// Every, when set, sends a window each Every instead of all at once.
	Every time.Duration
	// Checks are the load's own checks (as a k6 script's thresholds).
	Checks []scenario.Assertion
	// Ends are how its processes ended, for the record.
	Ends []record.LoadPart
	// Err is the end the load reports; nil is a clean end.
	Err        error
	NeverStart bool
	IgnoreStop bool
	// StartErr fails Start itself.
	StartErr error
	// StopTakes is how long the fake takes to end once told to stop.
	StopTakes time.Duration

	mu       sync.Mutex
	start    time.Time
	sent     []record.Window
	onWindow []func(record.Window)
	started  chan struct{}
	ended    chan error
	stop     chan struct{}
	stopOnce sync.Once
	// Stopped is closed once the load was told to stop.
	Stopped chan struct{}
	closed  bool
	endedAt time.Time
}

// Factory returns a engine.NewLoad that hands out l.
func (l *Load) Factory() engine.NewLoad {
	return func(engine.LoadSpec) (engine.Load, error) { return l, nil }
}

// OnWindow adds a watcher of windows.
func (l *Load) OnWindow(f func(record.Window)) { l.onWindow = append(l.onWindow, f) }

// Start starts the fake.
func (l *Load) Start(ctx context.Context) error {
	if l.StartErr != nil {
		return l.StartErr
	}
	l.started, l.ended, l.stop, l.Stopped = make(chan struct{}), make(chan error, 1), make(chan struct{}), make(chan struct{})
	go l.run(ctx)
	return nil
}

func (l *Load) run(ctx context.Context) {
	defer func() {
		l.mu.Lock()
		l.endedAt = time.Now()
		l.mu.Unlock()
		close(l.ended)
	}()
	defer func() {
		if l.StopTakes > 0 && l.stopped() {
			time.Sleep(l.StopTakes)
		}
	}()
	select {
	case <-time.After(l.StartAfter):
	case <-l.stop:
		return
	}
	if l.NeverStart {
		<-l.stop
		return
	}
	// The fake's load began whole seconds ago, one a window, so that its
	// windows lie wholly inside the run.
	base := time.Now().Truncate(time.Second).Add(-time.Duration(len(l.Windows)) * time.Second)
	l.mu.Lock()
	l.start = base
	l.mu.Unlock()
	close(l.started)
	for i, series := range l.Windows {
		if l.Every > 0 && i > 0 {
			select {
			case <-time.After(l.Every):
			case <-l.stop:
				return
			}
		}
		w := record.Window{Start: base.Add(time.Duration(i) * time.Second), Series: series}
		l.mu.Lock()
		l.sent = append(l.sent, w)
		l.mu.Unlock()
		for _, f := range l.onWindow {
			f(w)
		}
	}
	select {
	case <-time.After(l.RunFor):
		l.ended <- l.Err
	case <-l.stop:
		if l.IgnoreStop {
			<-ctx.Done()
			select {} // a part that never ends
		}
	}
}

// ScriptChecks are the fake's own checks.
func (l *Load) ScriptChecks() []scenario.Assertion { return l.Checks }

// Parts are the fake's process ends.
func (l *Load) Parts() []record.LoadPart { return l.Ends }

// stopped says the fake was told to stop.
func (l *Load) stopped() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

// EndedAt is when the fake ended; zero while it runs.
func (l *Load) EndedAt() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.endedAt
}

// Sent is how many windows the fake sent.
func (l *Load) Sent() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sent)
}

// Started is closed once the fake runs.
func (l *Load) Started() <-chan struct{} { return l.started }

// StartTime is when the fake started.
func (l *Load) StartTime() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.start
}

// Ended yields the fake's end and is closed after it.
func (l *Load) Ended() <-chan error { return l.ended }

// Stop tells the fake to stop.
func (l *Load) Stop() {
	l.stopOnce.Do(func() {
		if l.stop != nil {
			close(l.stop)
			close(l.Stopped)
		}
	})
}

// Wait waits up to d for the fake to end.
func (l *Load) Wait(d time.Duration) error {
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
			return errors.New("the fake load did not stop")
		}
	}
}

// Collect hands over the windows sent.
func (l *Load) Collect(time.Duration) (record.WindowSource, []string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return &record.Run{Windows: append([]record.Window(nil), l.sent...)}, nil, nil
}

// Close marks the fake closed.
func (l *Load) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
}

// Closed reports whether Close was called.
func (l *Load) Closed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Testbed is a fake testbed with one instance and no processes. UpErr fails
// Up; Die, when sent to, reports a dead service; DownErr fails Down.
type Testbed struct {
	UpErr   error
	DownErr error
	Die     chan error

	mu    sync.Mutex
	downs int
}

// Name is "fake".
func (*Testbed) Name() string { return "fake" }

// Up returns a topology with one instance that nothing listens on.
func (t *Testbed) Up(ctx context.Context, sc *scenario.Scenario) (*testbed.Topology, error) {
	if t.UpErr != nil {
		return nil, t.UpErr
	}
	if t.Die == nil {
		t.Die = make(chan error, 1)
	}
	var ins []testbed.Instance
	for _, name := range sc.Order {
		ins = append(ins, testbed.Instance{Service: name, Name: name, Address: "127.0.0.1:1"})
	}
	return &testbed.Topology{Instances: ins, ToxiproxyURL: "http://127.0.0.1:1", Died: t.Die}, nil
}

// Down counts teardowns.
func (t *Testbed) Down(context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.downs++
	return t.DownErr
}

// Downs is how many times Down was called.
func (t *Testbed) Downs() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.downs
}
