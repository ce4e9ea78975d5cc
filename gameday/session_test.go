package gameday

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/runner/loadtest"
	"github.com/chaosrun/chaosrun/scenario"
)

// TestGameDaySession drives a whole game day on a fake load and testbed:
// the Stop button ends it with a complete record; a dying load, an
// interrupt and a dead service end it with an incomplete one; the testbed
// is torn down once on every path.
func TestGameDaySession(t *testing.T) {
	window := [][]record.Series{{{Metric: "http_reqs", Kind: record.Counter, Count: 5, Sum: 5}}}
	tests := []struct {
		name        string
		load        *loadtest.Load
		press       bool // press Stop once the page is up
		cancel      bool // interrupt once the page is up
		cancelFirst bool // interrupt before the game day starts
		die         bool // a service dies once the page is up
		wantErr     string
		incomplete  bool
	}{
		{name: "stop button", load: &loadtest.Load{Windows: window, RunFor: time.Hour}, press: true},
		{name: "load dies", load: &loadtest.Load{Windows: window, RunFor: 50 * time.Millisecond, Err: errors.New("k6: exited with code 107")},
			wantErr: "code 107", incomplete: true},
		// Ctrl-C once load runs ends the day as Stop does: judged, complete.
		{name: "interrupt", load: &loadtest.Load{Windows: window, RunFor: time.Hour}, cancel: true},
		{name: "interrupt while starting", load: &loadtest.Load{Windows: window, RunFor: time.Hour}, cancelFirst: true,
			wantErr: "interrupted", incomplete: true},
		{name: "service dies", load: &loadtest.Load{Windows: window, RunFor: time.Hour}, die: true, wantErr: "svc exited", incomplete: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			bed := &loadtest.Testbed{Die: make(chan error, 1)}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sc := &scenario.Scenario{Name: "fake", Order: []string{"svc"},
				Assertions: []scenario.Assertion{{Name: "some-load", Metric: "http_reqs", Checks: scenario.Checks("count > 0")}}}
			ready := func(url string) {
				switch {
				case tc.press:
					go func() {
						resp, err := http.Post(url+"api/stop", "application/json", strings.NewReader(`{"by":"alice"}`))
						if err == nil {
							resp.Body.Close()
						}
					}()
				case tc.cancel:
					cancel()
				case tc.die:
					bed.Die <- errors.New("service svc exited: signal: killed")
				}
			}
			if tc.cancelFirst {
				cancel()
			}
			rec, err := Run(ctx, Options{Scenario: sc, Testbed: bed, Load: tc.load.Factory(), OutDir: dir, Ready: ready, MaxDuration: time.Minute})
			if rec == nil {
				t.Fatalf("no record: %v", err)
			}
			defer rec.Close()
			if tc.wantErr == "" && err != nil {
				t.Fatalf("error %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if rec.Incomplete != tc.incomplete {
				t.Errorf("incomplete %v, want %v (%q)", rec.Incomplete, tc.incomplete, rec.Problems)
			}
			if bed.Downs() != 1 || !tc.load.Closed() {
				t.Errorf("torn down %d times, load closed %v", bed.Downs(), tc.load.Closed())
			}
			timeline, err := os.ReadFile(filepath.Join(dir, "timeline.json"))
			if err != nil && !tc.cancelFirst {
				t.Errorf("timeline: %v", err)
			}
			if tc.cancel && !strings.Contains(string(timeline), `"Ctrl-C"`) {
				t.Errorf("the timeline does not say Ctrl-C stopped the day:\n%s", timeline)
			}
			if !tc.incomplete && (len(rec.Verdicts) != 1 || !rec.Verdicts[0].Pass) {
				t.Errorf("verdicts %+v", rec.Verdicts)
			}
		})
	}
}
