package kvdispatcher

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
	"github.com/chaosrun/chaosrun/targets/platform/server"
)

// testShard is a real kvstore shard on httptest, counting the reads it serves.
type testShard struct {
	srv   *httptest.Server
	reads atomic.Int64
	delay atomic.Int64 // ns added to every read
}

func newTestShards(t testing.TB, n int, c capacity) []*testShard {
	t.Helper()
	var out []*testShard
	for range n {
		st := newStore()
		st.Seed(20, 50, 1024)
		srv := server.New("kvstore", serverConfig(), server.NewMetrics(), nil)
		(&storeAPI{Store: st, Throttle: newThrottle(c)}).Register(srv)
		ts := &testShard{}
		h := srv.Handler()
		ts.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				ts.reads.Add(1)
				time.Sleep(time.Duration(ts.delay.Load()))
			}
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(ts.srv.Close)
		out = append(out, ts)
	}
	return out
}

func serverConfig() server.Config {
	c := server.DefaultFlags()
	return c.Config()
}

func newTestDispatcher(t testing.TB, cfg dispatcherConfig, shards []*testShard) (*dispatcher, http.Handler) {
	t.Helper()
	var addrs []string
	for _, s := range shards {
		addrs = append(addrs, strings.TrimPrefix(s.srv.URL, "http://"))
	}
	m := server.NewMetrics()
	clients, err := newShardClients(cfg, addrs, 2*time.Second, m.Registry())
	if err != nil {
		t.Fatal(err)
	}
	d, err := newDispatcher(cfg, clients, 2*time.Second, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New("kvdispatcher", serverConfig(), m, nil)
	d.Register(srv)
	return d, srv.Handler()
}

func do(h http.Handler, method, path, caller, tier string, body string) *httptest.ResponseRecorder {
	var rd *strings.Reader
	if body != "" {
		rd = strings.NewReader(body)
	} else {
		rd = strings.NewReader("")
	}
	r := httptest.NewRequest(method, path, rd)
	if caller != "" {
		r.Header.Set(platform.HeaderCaller, caller)
	}
	if tier != "" {
		r.Header.Set(platform.HeaderCriticality, tier)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func offConfig() dispatcherConfig {
	c := defaultDispatcherConfig()
	c.RU, c.Tiers, c.HotKeys, c.ShardBreakers = false, false, false, false
	c.Quota, c.Burst = 1e6, 1e6
	return c
}

func TestDispatcherRoutesByHash(t *testing.T) {
	shards := newTestShards(t, 4, capacity{})
	_, h := newTestDispatcher(t, offConfig(), shards)
	for p := range 20 {
		pk := seedPartition(p)
		want := shardOf(pk, 4)
		before := shards[want].reads.Load()
		w := do(h, "GET", "/kv/"+pk+"/"+seedKey(3), "c", "", "")
		if w.Code != 200 || w.Header().Get(headerShard) != string(rune('0'+want)) {
			t.Fatalf("%s: status %d shard %q, want 200 shard %d: %s", pk, w.Code, w.Header().Get(headerShard), want, w.Body)
		}
		if shards[want].reads.Load() != before+1 {
			t.Fatalf("%s: shard %d did not serve the read", pk, want)
		}
		var ans getAnswer
		if err := json.Unmarshal(w.Body.Bytes(), &ans); err != nil || len(ans.Value) != 1024 {
			t.Fatalf("%s: answer %v, %v", pk, ans.Key, err)
		}
	}
	w := do(h, "PUT", "/kv/p1/new", "c", "", `{"value":"hello"}`)
	if w.Code != 200 {
		t.Fatalf("PUT: %d %s", w.Code, w.Body)
	}
	if w := do(h, "GET", "/kv/p1/new", "c", "", ""); w.Code != 200 || !strings.Contains(w.Body.String(), "hello") {
		t.Fatalf("read after write: %d %s", w.Code, w.Body)
	}
	if w := do(h, "GET", "/scan/p1?limit=5&from=r00000", "c", "", ""); w.Code != 200 || !strings.Contains(w.Body.String(), `"bytes":5120`) {
		t.Fatalf("scan: %d %.200s", w.Code, w.Body)
	}
	if w := do(h, "GET", "/kv/p1/r00001", "c", "urgent", ""); w.Code != 400 {
		t.Fatalf("bad tier: %d, want 400", w.Code)
	}
	if w := do(h, "GET", "/kv/p1/missing", "c", "", ""); w.Code != 404 {
		t.Fatalf("missing key: %d, want 404", w.Code)
	}
}

// The same quota in requests lets a scanner through; in request units it
// stops it while a point reader at the same request rate goes on.
func TestDispatcherRUvsQPS(t *testing.T) {
	for _, ru := range []bool{false, true} {
		cfg := offConfig()
		cfg.RU, cfg.Quota, cfg.Burst = ru, 100, 100
		shards := newTestShards(t, 2, capacity{})
		_, h := newTestDispatcher(t, cfg, shards)
		okScan, okPoint := 0, 0
		var reason string
		for i := range 50 {
			if w := do(h, "GET", "/scan/p3?limit=50", "scanner", "", ""); w.Code == 200 {
				okScan++
			} else {
				reason = w.Header().Get(platform.RejectHeader)
			}
			if w := do(h, "GET", "/kv/p3/"+seedKey(i), "reader", "", ""); w.Code == 200 {
				okPoint++
			}
		}
		if okPoint != 50 {
			t.Errorf("ru=%v: point reader got %d of 50", ru, okPoint)
		}
		switch {
		case !ru && okScan != 50:
			t.Errorf("QPS mode: scanner got %d of 50 scans within a 100/s quota, want all", okScan)
		case ru && (okScan > 10 || reason != platform.ReasonQuota):
			t.Errorf("RU mode: scanner got %d of 50 scans of ~13.5 RU with 100 RU (reason %q), want ≤ 10 and quota", okScan, reason)
		}
	}
}

func TestDispatcherTiersRaiseLowTiersPrice(t *testing.T) {
	cfg := offConfig()
	cfg.RU, cfg.Tiers, cfg.Quota, cfg.Burst = true, true, 100, 100
	shards := newTestShards(t, 1, capacity{})
	d, h := newTestDispatcher(t, cfg, shards)
	served := func(tier string) int {
		n := 0
		for i := range 40 {
			if do(h, "GET", "/kv/p1/"+seedKey(i), "svc-"+tier, tier, "").Code == 200 {
				n++
			}
		}
		return n
	}
	d.level.Store(2) // the latency ratio collapsed
	crit, def, shed := served("critical"), served("default"), served("sheddable")
	if crit != 40 || def > 5 || shed > 5 {
		t.Fatalf("at level 2: critical %d, default %d, sheddable %d of 40; want 40, ≤ 5, ≤ 5", crit, def, shed)
	}
	w := do(h, "GET", "/kv/p1/r00001", "svc-sheddable", "sheddable", "")
	if w.Code != 429 || w.Header().Get(platform.RejectHeader) != platform.ReasonQuota || !strings.Contains(w.Body.String(), "50×") {
		t.Fatalf("shed answer: %d %q %s", w.Code, w.Header().Get(platform.RejectHeader), w.Body)
	}
}

func TestDispatcherHotKeyCacheAndCoalescing(t *testing.T) {
	cfg := offConfig()
	cfg.HotKeys, cfg.HotThreshold = true, 5
	shards := newTestShards(t, 1, capacity{})
	_, h := newTestDispatcher(t, cfg, shards)
	served := map[string]int{}
	for range 100 {
		w := do(h, "GET", "/kv/p2/r00001", "bot", "", "")
		if w.Code != 200 {
			t.Fatalf("status %d", w.Code)
		}
		served[w.Header().Get(headerServedBy)]++
	}
	if reads := shards[0].reads.Load(); reads > 6 || served[servedCache] < 94 {
		t.Fatalf("100 sequential reads of a hot key: %d backend reads, served %v; want ≤ 6 and the rest from cache", reads, served)
	}

	// Concurrent misses of a hot key with a slow shard share one read, even
	// when the caller that started it goes away.
	shards = newTestShards(t, 1, capacity{})
	cfg.HotThreshold = 1
	_, h = newTestDispatcher(t, cfg, shards)
	shards[0].delay.Store(int64(200 * time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	codes := make([]int, 20)
	by := make([]string, 20)
	for i := range 20 {
		wg.Go(func() {
			r := httptest.NewRequest("GET", "/kv/p2/r00002", nil)
			if i == 0 {
				r = r.WithContext(ctx)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			codes[i], by[i] = w.Code, w.Header().Get(headerServedBy)
		})
		if i == 0 {
			time.Sleep(20 * time.Millisecond) // the first one leads
		}
	}
	time.Sleep(50 * time.Millisecond)
	cancel()
	wg.Wait()
	coalesced := 0
	for i := 1; i < 20; i++ {
		if codes[i] != 200 {
			t.Fatalf("waiter %d: status %d after the leader left", i, codes[i])
		}
		if by[i] == servedCoalesced {
			coalesced++
		}
	}
	if reads := shards[0].reads.Load(); reads != 1 || coalesced < 15 {
		t.Fatalf("20 concurrent misses: %d backend reads, %d coalesced; want 1 and ≥ 15", reads, coalesced)
	}
	// A write drops the cached value.
	if w := do(h, "PUT", "/kv/p2/r00002", "c", "", `{"value":"new"}`); w.Code != 200 {
		t.Fatalf("PUT: %d", w.Code)
	}
	shards[0].delay.Store(0)
	if w := do(h, "GET", "/kv/p2/r00002", "c", "", ""); !strings.Contains(w.Body.String(), `"new"`) {
		t.Fatalf("read after write served a stale value: %s", w.Body)
	}
}

func TestDispatcherShardThrottleIsPerShard(t *testing.T) {
	shards := newTestShards(t, 2, capacity{ReadsPerSec: 5})
	_, h := newTestDispatcher(t, offConfig(), shards)
	var hot, cold string
	for p := range 20 {
		if shardOf(seedPartition(p), 2) == 0 && hot == "" {
			hot = seedPartition(p)
		}
		if shardOf(seedPartition(p), 2) == 1 && cold == "" {
			cold = seedPartition(p)
		}
	}
	throttled := 0
	for i := range 30 {
		w := do(h, "GET", "/kv/"+hot+"/"+seedKey(i), "c", "", "")
		if w.Code == 429 && w.Header().Get(platform.RejectHeader) == reasonThrottled {
			throttled++
		}
	}
	if throttled < 20 {
		t.Fatalf("30 reads at a 5/s shard: %d throttled, want ≥ 20", throttled)
	}
	if w := do(h, "GET", "/kv/"+cold+"/r00001", "c", "", ""); w.Code != 200 {
		t.Fatalf("the other shard: %d, want 200", w.Code)
	}
}
