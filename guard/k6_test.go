package guard_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/guard"
	"github.com/chaosrun/chaosrun/internal/testenv"
	"github.com/chaosrun/chaosrun/workloads/k6build"
	"github.com/chaosrun/chaosrun/workloads/k6run"
)

// TestK6HonoursTheGuard runs the real k6 with the guard's flags plus one
// extra blocked loopback address (so that nothing leaves the machine): the
// allowed server gets its requests, the blocked one gets none.
func TestK6HonoursTheGuard(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real k6; not with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin, err := k6build.Ensure(ctx, k6build.Options{Progress: os.Stderr, Getenv: os.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	serve := func(addr string) (string, *atomic.Int64) {
		var n atomic.Int64
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			testenv.Unavailable(t, "cannot listen on %s: %v", addr, err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1) })}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
		return "http://" + ln.Addr().String(), &n
	}
	okURL, okHits := serve("127.0.0.1:0")
	blockedURL, blockedHits := serve("127.0.0.2:0")

	script := filepath.Join(t.TempDir(), "guard.js")
	os.WriteFile(script, []byte(`import http from 'k6/http';
export const options = { iterations: 5, vus: 1 };
export default function () {
  http.get(__ENV.OK);
  http.get(__ENV.BLOCKED);
}
`), 0o644)
	a, _ := guard.Parse(nil)
	extra := append(a.K6Flags(), "--blacklist-ip", "127.0.0.2/32")
	res, err := k6run.Run(ctx, k6run.Spec{
		Binary:  bin.Path,
		Script:  script,
		Env:     map[string]string{"OK": okURL, "BLOCKED": blockedURL},
		LogPath: filepath.Join(t.TempDir(), "k6.log"),
		Extra:   extra,
	})
	if err != nil {
		t.Fatalf("k6: %v", err)
	}
	t.Logf("k6 ran %s; allowed %d, blocked %d", res.Duration, okHits.Load(), blockedHits.Load())
	if okHits.Load() != 5 || blockedHits.Load() != 0 {
		t.Fatalf("allowed server saw %d requests (want 5), blocked one %d (want 0)\n%s", okHits.Load(), blockedHits.Load(), res.Tail)
	}
	if !strings.Contains(res.Tail, "blacklist") && !strings.Contains(res.Tail, "blocked") {
		t.Logf("k6 output did not mention the block:\n%s", res.Tail)
	}
}
