package runner

import (
	"time"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/record"
)

// abortWatch judges a run's abortOnFail checks as windows arrive; fired
// is closed when one failed.
type abortWatch struct {
	fired chan struct{}
	done  chan struct{}
	stop  func()
	v     record.Verdict
	ok    bool
}

// watchAborts watches live's checks for a run that started at start, with
// the fault events of evs; it does nothing when there are none.
func watchAborts(live *assertions.Live, start time.Time, evs *eventLog) *abortWatch {
	w := &abortWatch{done: make(chan struct{})}
	if live.Len() == 0 {
		close(w.done)
		return w
	}
	w.fired = make(chan struct{})
	stop := make(chan struct{})
	w.stop = func() { close(stop) }
	go func() {
		defer close(w.done)
		for {
			select {
			case <-stop:
				return
			case <-live.Changed():
				if v, ok := live.Check(start, evs.list()); ok {
					w.v, w.ok = v, true
					close(w.fired)
					return
				}
			}
		}
	}()
	return w
}

// end stops the watch and says which check failed, if one did.
func (w *abortWatch) end() (record.Verdict, bool) {
	if w.stop != nil {
		w.stop()
		w.stop = nil
	}
	<-w.done
	return w.v, w.ok
}
