package k6run

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/workloads/k6build"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

func TestArgs(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		mid  []string // between the environment and the extra flags
	}{
		{"plain", Spec{StreamAddr: "127.0.0.1:9"}, []string{"--out", "resilience=tcp://127.0.0.1:9"}},
		{"TLS options; the token stays off the command line",
			Spec{StreamAddr: "127.0.0.1:9", StreamToken: "s3cret", StreamOptions: url.Values{"ca": {"/tmp/a b.pem"}, "server_name": {"h.test"}}},
			[]string{"--out", "resilience=tcp://127.0.0.1:9?ca=%2Ftmp%2Fa+b.pem&server_name=h.test"}},
		{"a duration, outputs of the workload's own, the summary exported",
			Spec{StreamAddr: "127.0.0.1:9", Duration: 15 * time.Second, Outputs: []string{"csv=r.csv", "web-dashboard"}, SummaryExport: "k6/summary.json"},
			[]string{"--duration", "15s", "--out", "resilience=tcp://127.0.0.1:9", "--out", "csv=r.csv", "--out", "web-dashboard", "--summary-export", "k6/summary.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.spec
			s.Script, s.Env, s.Extra = "s.js", map[string]string{"B": "2", "A": "1"}, []string{"--vus", "1"}
			got := Args(s)
			want := append(append([]string{"run", "--quiet", "--no-usage-report", "--no-color", "--address", "",
				"-e", "A=1", "-e", "B=2"}, tt.mid...), "--vus", "1", "s.js")
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Args =\n%q\nwant\n%q", got, want)
			}
		})
	}
}

func TestRing(t *testing.T) {
	r := &ring{max: 10}
	_, _ = r.Write([]byte("a\nb\nc\n"))
	_, _ = r.Write([]byte("0123456789\nlast\n"))
	if got := r.lastLines(3); got != "6789\nlast" {
		t.Fatalf("lastLines = %q", got)
	}
}

func TestRunErrors(t *testing.T) {
	if _, err := Run(context.Background(), Spec{Script: "x.js"}); err == nil {
		t.Fatal("no binary: want an error")
	}
	if _, err := Run(context.Background(), Spec{Binary: filepath.Join(t.TempDir(), "nope"), Script: "x.js"}); err == nil {
		t.Fatal("missing binary: want an error")
	}
	// A stand-in binary for exit codes: the real k6 is tested below.
	fake := filepath.Join(t.TempDir(), "k6")
	script := "#!/bin/sh\necho starting\necho \"failing with $K6_EXIT\" >&2\nexit $K6_EXIT\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		code       string
		wantErr    bool
		thresholds bool
	}{{"0", false, false}, {"99", false, true}, {"107", true, false}}
	for _, tt := range tests {
		t.Setenv("K6_EXIT", tt.code)
		log := filepath.Join(t.TempDir(), "k6.log")
		res, err := Run(context.Background(), Spec{Binary: fake, Script: "x.js", LogPath: log})
		if (err != nil) != tt.wantErr || res.ThresholdsFailed != tt.thresholds {
			t.Errorf("exit %s: res %+v err %v", tt.code, res, err)
		}
		if err != nil && (!strings.Contains(err.Error(), "code "+tt.code) || !strings.Contains(err.Error(), "failing with")) {
			t.Errorf("exit %s: error lacks code or tail: %v", tt.code, err)
		}
		if b, _ := os.ReadFile(log); !strings.Contains(string(b), "failing with "+tt.code) {
			t.Errorf("exit %s: log has %q", tt.code, b)
		}
	}
}

// realK6 builds (or finds cached) the k6 with the extension.
func realK6(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the real k6 build")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	bin, err := k6build.Ensure(ctx, k6build.Options{Progress: os.Stderr, Getenv: os.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	return bin.Path
}

const script = `import http from 'k6/http';
export const options = {
  scenarios: { load: {
    executor: 'constant-arrival-rate', rate: 50, timeUnit: '1s',
    duration: __ENV.DURATION, preAllocatedVUs: 10, gracefulStop: '2s',
  } },
};
export default function () {
  http.get(__ENV.TARGET + '/hello', { tags: { name: 'hello' } });
}
`

type fixture struct {
	bin, script string
	srv         *httptest.Server
	hits        *atomic.Int64
}

func setup(t *testing.T) fixture {
	bin := realK6(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "load.js")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	hits := new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return fixture{bin: bin, script: path, srv: srv, hits: hits}
}

func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func TestRunStreamsEveryRequest(t *testing.T) {
	f := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	recv, err := stream.Listen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer recv.Close()
	log := filepath.Join(t.TempDir(), "k6.log")
	res, err := Run(ctx, Spec{
		Binary: f.bin, Script: f.script, StreamAddr: recv.Addr(), LogPath: log,
		Env: map[string]string{"TARGET": f.srv.URL, "DURATION": "3s"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := recv.Close(); err != nil {
		t.Fatal(err)
	}
	sum := recv.Summary()
	if !sum.Ended || sum.Malformed != 0 || sum.Dropped != 0 {
		t.Fatalf("stream: ended %v malformed %d dropped %d errors %v", sum.Ended, sum.Malformed, sum.Dropped, sum.Errors)
	}
	var reqs, durs int64
	for _, w := range sum.Windows {
		for _, s := range w.Series {
			if s.Tags["url"] != "" {
				t.Fatalf("url tag in the stream: %+v", s)
			}
			switch s.Metric {
			case "http_reqs":
				reqs += s.Count
			case "http_req_duration":
				durs += s.Count
				if s.Tags["name"] != "hello" || s.Tags["status"] != "200" {
					t.Errorf("http_req_duration tags: %v", s.Tags)
				}
			}
		}
	}
	served := f.hits.Load()
	t.Logf("k6 took %s; server saw %d requests; stream: http_reqs %d, http_req_duration %d over %d windows",
		res.Duration, served, reqs, durs, len(sum.Windows))
	if served < 140 || served > 160 {
		t.Errorf("server saw %d requests, want about 150 (50/s for 3 s)", served)
	}
	if reqs != served || durs != served {
		t.Errorf("stream counts http_reqs %d, http_req_duration %d; server saw %d", reqs, durs, served)
	}
	if !processGone(res.PID) {
		t.Errorf("k6 pid %d still exists", res.PID)
	}
}

func TestRunCancelStopsK6(t *testing.T) {
	f := setup(t)
	recv, err := stream.Listen(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer recv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pid atomic.Int64
	started := make(chan struct{})
	go func() {
		<-started
		time.Sleep(2 * time.Second)
		cancel()
	}()
	var cancelledAt time.Time
	res, err := Run(ctx, Spec{
		Binary: f.bin, Script: f.script, StreamAddr: recv.Addr(),
		Env: map[string]string{"TARGET": f.srv.URL, "DURATION": "60s"},
		Started: func(p int) {
			pid.Store(int64(p))
			close(started)
		},
	})
	cancelledAt = time.Now()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res.Duration > 2*time.Second+Grace+5*time.Second {
		t.Errorf("Run took %s after a cancel at 2 s", res.Duration)
	}
	if !processGone(int(pid.Load())) {
		t.Fatalf("k6 pid %d still exists after Run returned", pid.Load())
	}
	_ = recv.Close()
	sum := recv.Summary()
	t.Logf("cancelled run: %s, exit %d, ended %v, %d windows, returned %s after cancel",
		res.Duration, res.ExitCode, sum.Ended, len(sum.Windows), time.Since(cancelledAt))
	if len(sum.Windows) == 0 || !sum.Ended {
		t.Errorf("after a graceful stop: %d windows, ended %v; want windows and the end message", len(sum.Windows), sum.Ended)
	}
}

func TestRunKilledK6IsAnError(t *testing.T) {
	f := setup(t)
	recv, err := stream.Listen(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer recv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, Spec{
		Binary: f.bin, Script: f.script, StreamAddr: recv.Addr(),
		Env:   map[string]string{"TARGET": f.srv.URL, "DURATION": "60s"},
		Extra: []string{"--verbose"},
		Started: func(p int) {
			time.AfterFunc(2*time.Second, func() { _ = syscall.Kill(p, syscall.SIGKILL) })
		},
	})
	if err == nil || !strings.Contains(err.Error(), "killed by signal killed") {
		t.Fatalf("err = %v, want a killed-by-signal error", err)
	}
	if res.Tail == "" || !strings.Contains(err.Error(), res.Tail) {
		t.Errorf("error lacks the output tail %q", res.Tail)
	}
	if res.Duration > 30*time.Second {
		t.Errorf("Run took %s", res.Duration)
	}
	_ = recv.Close()
	if recv.Ended() {
		t.Error("stream says ended after k6 was killed")
	}
}
