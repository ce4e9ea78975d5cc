package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rssKiB reads a process's resident set size from /proc.
func rssKiB(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// serveTarget starts `chaosrun serve ARGS…` on 127.0.0.1 and returns its
// process and base URL (from its "listening on" line).
func serveTarget(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(chaosrunBinary(t), append([]string{"serve"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("serve %s: no ready line: %v", args[0], err)
	}
	return cmd, "http://" + strings.TrimSpace(strings.TrimPrefix(line, "listening on http://"))
}

// TestReliabilityTargetMemoryBoundedUnderFlood floods real targets with
// requests from ever new made-up callers and keys, above their capacity, and
// samples their RSS: bounded queues, bounded per-caller state and
// constant-size estimators (top-k, quantiles) keep it flat after warm-up.
func TestReliabilityTargetMemoryBoundedUnderFlood(t *testing.T) {
	skipShort(t)
	cases := []struct {
		name  string
		start func(t *testing.T) (*exec.Cmd, string)
		path  func(n int64) string
	}{
		{
			name: "ledger",
			start: func(t *testing.T) (*exec.Cmd, string) {
				return serveTarget(t, "ledger", "--listen", "127.0.0.1:0",
					"--workers", "4", "--service-time", "2ms", "--quota-default", "5", "--queue-length", "256")
			},
			path: func(n int64) string { return fmt.Sprintf("/ledger/transactions?account=acct-%d&page=%d", n%1000, n%7) },
		},
		{
			name: "kvdispatcher",
			start: func(t *testing.T) (*exec.Cmd, string) {
				_, store := serveTarget(t, "kvstore", "--listen", "127.0.0.1:0")
				return serveTarget(t, "kvdispatcher", "--listen", "127.0.0.1:0", "--dep", "kvstore="+strings.TrimPrefix(store, "http://"),
					"--workers", "4", "--queue-length", "256", "--ru-quota", "5", "--ru-burst", "5")
			},
			// Ever new keys over a few partitions: the top-k counter, hot-key
			// cache and per-caller buckets must not grow with them.
			path: func(n int64) string { return fmt.Sprintf("/kv/p%d/r%d", n%50, n) },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { floodAndMeasure(t, tc.start, tc.path) })
	}
}

func floodAndMeasure(t *testing.T, start func(t *testing.T) (*exec.Cmd, string), path func(int64) string) {
	cmd, base := start(t)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}, Timeout: 5 * time.Second}
	var sent atomic.Int64
	flood := func(ctx context.Context) {
		var wg sync.WaitGroup
		for w := range 64 {
			wg.Go(func() {
				for i := 0; ctx.Err() == nil && i < 100_000; i++ {
					n := sent.Add(1)
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path(n), nil)
					req.Header.Set("X-Caller", fmt.Sprintf("made-up-%d-%d", w, i))
					if resp, err := client.Do(req); err == nil {
						resp.Body.Close()
					}
				}
			})
		}
		wg.Wait()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	flood(ctx)
	cancel()
	warm, warmSent := rssKiB(t, cmd.Process.Pid), sent.Load()
	ctx, cancel = context.WithTimeout(context.Background(), 16*time.Second)
	flood(ctx)
	cancel()
	end := rssKiB(t, cmd.Process.Pid)
	t.Logf("RSS after warm-up %d KiB (%d requests), after the flood %d KiB (%d requests, each a new caller)", warm, warmSent, end, sent.Load())
	if sent.Load() < 3*warmSent {
		t.Fatalf("the flood sent only %d requests after %d in warm-up: too little to judge", sent.Load()-warmSent, warmSent)
	}
	// Unbounded per-caller state costs ~270 B a caller: 12 MB for 47k
	// callers on the ledger; bounded, the RSS moved by 0.5 MB.
	if limit := warm + 6*1024; end > limit {
		t.Errorf("RSS grew from %d KiB to %d KiB under the flood (limit %d KiB): some state grows with the flood", warm, end, limit)
	}
}
