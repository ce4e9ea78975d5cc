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

// TestReliabilityTargetMemoryBoundedUnderFlood floods a real ledger process with
// requests from ever new made-up callers and accounts, above its capacity,
// and samples its RSS: bounded queues and bounded per-caller state keep it
// flat after warm-up.
func TestReliabilityTargetMemoryBoundedUnderFlood(t *testing.T) {
	skipShort(t)
	cmd := exec.Command(chaosrunBinary(t), "serve", "ledger", "--listen", "127.0.0.1:0",
		"--workers", "4", "--service-time", "2ms", "--quota-default", "5", "--queue-length", "256")
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
		t.Fatalf("no ready line: %v", err)
	}
	base := "http://" + strings.TrimSpace(strings.TrimPrefix(line, "listening on http://"))

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}, Timeout: 5 * time.Second}
	var sent atomic.Int64
	flood := func(ctx context.Context) {
		var wg sync.WaitGroup
		for w := range 64 {
			wg.Go(func() {
				for i := 0; ctx.Err() == nil && i < 100_000; i++ {
					n := sent.Add(1)
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/ledger/transactions?account=acct-%d&page=%d", base, n%1000, n%7), nil)
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
	// callers here; bounded, the RSS moved by 0.5 MB.
	if limit := warm + 6*1024; end > limit {
		t.Errorf("RSS grew from %d KiB to %d KiB under the flood (limit %d KiB): some state grows with the flood", warm, end, limit)
	}
}
