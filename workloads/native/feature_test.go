package native

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/models/arrival"
	"github.com/chaosrun/chaosrun/models/client"
	"github.com/chaosrun/chaosrun/models/keys"
)

// seen records what a test server received.
type seen struct {
	mu      sync.Mutex
	paths   []string
	bodies  []string
	headers []http.Header
}

func recordingServer(t *testing.T, s *seen, answer func(w http.ResponseWriter, r *http.Request)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.RequestURI())
		s.bodies = append(s.bodies, string(b))
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		if answer != nil {
			answer(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// TestTemplatesKeysAndTags sends keyed requests like the key-value
// workload: two key streams in the path, the partition's shard as a tag,
// a body with the arrival's index and the seed, and headers.
func TestTemplatesKeysAndTags(t *testing.T) {
	var s seen
	srv := recordingServer(t, &s, nil)
	spec := Spec{Seed: 42, Streams: []Stream{{
		Name: "point", Targets: []string{srv.URL + "/api"}, Method: "POST", Path: "/kv/{pk}/{sk}?v=1",
		Body:    `{"key":"{pk}/{sk}","id":"{seed}-{seq}"}`,
		Headers: map[string]string{"Content-Type": "application/json", "X-Caller": "reader"},
		Timeout: time.Second, Arrival: arrival.Constant(400, 0, time.Second),
		Keys: map[string]Keys{
			"pk": {Config: keys.Config{Kind: keys.Uniform, N: 50, Seed: 1}, Prefix: "p", Shards: 4},
			"sk": {Config: keys.Config{Kind: keys.Uniform, N: 300, Seed: 2}, Prefix: "r", Width: 5},
		},
		Tags:      map[string]string{"api": "Get", "shard": "{pk.shard}", "key_class": "{pk.shard}"},
		TagValues: map[string]map[string]string{"key_class": {"0": "faulty-shard", "*": "other"}},
	}}}
	sum := runToStream(t, spec, Shard{})
	if len(s.paths) != 400 {
		t.Fatalf("server saw %d requests, want 400", len(s.paths))
	}
	perShard := map[string]int64{}
	for i, p := range s.paths {
		var pk, sk string
		if _, err := fmt.Sscanf(strings.TrimSuffix(strings.TrimPrefix(p, "/api/kv/"), "?v=1"), "%s", &pk); err != nil || !strings.HasSuffix(p, "?v=1") {
			t.Fatalf("path %q", p)
		}
		pk, sk, _ = strings.Cut(pk, "/")
		if !strings.HasPrefix(pk, "p") || len(sk) != 6 || sk[0] != 'r' {
			t.Fatalf("path %q: want /api/kv/pN/rNNNNN?v=1", p)
		}
		if want := `{"key":"` + pk + "/" + sk + `","id":"42-`; !strings.HasPrefix(s.bodies[i], want) {
			t.Fatalf("body %q, want it to start %q", s.bodies[i], want)
		}
		if s.headers[i].Get("X-Caller") != "reader" || s.headers[i].Get("Content-Type") != "application/json" {
			t.Fatalf("headers %v", s.headers[i])
		}
		perShard[strconv.Itoa(int(fnv32(pk)%4))]++
	}
	for shard, want := range perShard {
		class := "other"
		if shard == "0" {
			class = "faulty-shard"
		}
		if n, _ := total(sum, "http_reqs", map[string]string{"shard": shard, "key_class": class, "api": "Get"}); n != want {
			t.Errorf("shard %s: %d requests tagged, the server saw %d", shard, n, want)
		}
	}
	seqs := map[string]bool{}
	for _, b := range s.bodies {
		seqs[b[strings.LastIndex(b, "-")+1:]] = true
	}
	if len(seqs) != 400 {
		t.Errorf("%d distinct {seq} values in 400 bodies", len(seqs))
	}
}

// TestOnlyShards keeps the keys on one shard, as the hot-shard caller does.
func TestOnlyShards(t *testing.T) {
	var s seen
	srv := recordingServer(t, &s, nil)
	spec := Spec{Streams: []Stream{{Name: "hot", Targets: []string{srv.URL}, Method: "GET", Path: "/kv/{pk}", Timeout: time.Second,
		Arrival: arrival.Constant(200, 0, 500*time.Millisecond),
		Keys:    map[string]Keys{"pk": {Config: keys.Config{Kind: keys.Uniform, N: 200}, Prefix: "p", Shards: 4, Only: []int{0}}}}}}
	runToStream(t, spec, Shard{})
	distinct := map[string]bool{}
	for _, p := range s.paths {
		pk := strings.TrimPrefix(p, "/kv/")
		if fnv32(pk)%4 != 0 {
			t.Fatalf("key %s is on shard %d", pk, fnv32(pk)%4)
		}
		distinct[pk] = true
	}
	if len(distinct) < 20 {
		t.Errorf("only %d distinct keys", len(distinct))
	}
}

// TestClientModels checks retries, back pressure, deadline and
// criticality headers and the resilience_* series against a server that
// always sheds with back pressure.
func TestClientModels(t *testing.T) {
	var s seen
	srv := recordingServer(t, &s, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Backpressure", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	naive := client.Defaults(client.ModelNaive)
	smart := client.Defaults(client.ModelSmart)
	smart.Deadline = 800 * time.Millisecond
	mk := func(name string, c client.Config) Stream {
		return Stream{Name: name, Targets: []string{srv.URL}, Method: "GET", Path: "/" + name, Timeout: time.Second,
			Arrival: arrival.Constant(50, 0, time.Second), Tags: map[string]string{"api": name},
			Client: &Client{Config: c, Tier: "critical", Headers: client.DefaultHeaderNames}}
	}
	sum := runToStream(t, Spec{Streams: []Stream{mk("naive", naive), mk("smart", smart)}}, Shard{})
	_, reqs := total(sum, "resilience_requests", map[string]string{"api": "naive", "model": "naive"})
	_, attempts := total(sum, "resilience_attempts", map[string]string{"api": "naive"})
	_, sent := total(sum, "http_reqs", map[string]string{"api": "naive", "status": "503", "expected_response": "false"})
	if reqs != 50 || attempts != 200 || sent != 200 {
		t.Errorf("naive: %v requests, %v attempts, %v sent; want 50, 200 (3 retries each), 200", reqs, attempts, sent)
	}
	_, failed := total(sum, "http_req_failed", map[string]string{"api": "naive"})
	if failed != 200 {
		t.Errorf("naive: %v failed, want 200", failed)
	}
	_, sreqs := total(sum, "resilience_requests", map[string]string{"api": "smart", "model": "smart"})
	_, ssent := total(sum, "http_reqs", map[string]string{"api": "smart"})
	_, rejected := total(sum, "resilience_breaker_rejections", map[string]string{"api": "smart"})
	if sreqs != 50 || ssent+rejected != 50 {
		t.Errorf("smart: %v requests, %v sent, %v rejected: want 50 requests, each sent once or refused by the breaker", sreqs, ssent, rejected)
	}
	_, goodput := total(sum, "resilience_goodput", map[string]string{"api": "smart"})
	if goodput != 0 {
		t.Errorf("goodput %v against a shedding server", goodput)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range s.paths {
		h := s.headers[i]
		if h.Get("X-Criticality") != "critical" {
			t.Fatalf("%s: no criticality header: %v", p, h)
		}
		dl := h.Get("X-Deadline-Ms")
		if p == "/smart" {
			if ms, err := strconv.Atoi(dl); err != nil || ms <= 0 || ms > 800 {
				t.Fatalf("smart: deadline header %q, want 1..800", dl)
			}
		} else if dl != "" {
			t.Fatalf("naive has no deadline, sent %q", dl)
		}
	}
}

// TestChecksAndCustomMetrics checks expected statuses (k6's checks) and
// custom rate and counter metrics on status, duration and a header.
func TestChecksAndCustomMetrics(t *testing.T) {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		i := n
		mu.Unlock()
		switch i % 4 {
		case 0:
			w.WriteHeader(http.StatusInternalServerError)
		case 1:
			w.Header().Set("X-Served-By", "cache")
		case 2:
			w.Header().Set("X-Served-By", "backend")
			time.Sleep(30 * time.Millisecond)
		default:
			w.Header().Set("X-Served-By", "backend")
		}
	}))
	defer srv.Close()
	spec := Spec{Streams: []Stream{{Name: "s", Targets: []string{srv.URL}, Method: "GET", Path: "/", Timeout: time.Second,
		Arrival: arrival.Constant(100, 0, time.Second), Expect: []int{200}, Tags: map[string]string{"api": "Read"},
		Metrics: []Metric{
			{Name: "goodput", Kind: "rate", When: Condition{Status: []int{200}, Within: 20 * time.Millisecond}},
			{Name: "backend_reads", Kind: "counter", When: Condition{Status: []int{200}, Header: "x-served-by", Value: "backend"}},
		}}}}
	sum := runToStream(t, spec, Shard{})
	c, pass := total(sum, "checks", map[string]string{"api": "Read", "scenario": "s"})
	if c != 100 || pass != 75 {
		t.Errorf("checks: %d samples, %v passed; want 100 and 75", c, pass)
	}
	c, good := total(sum, "goodput", map[string]string{"api": "Read"})
	if c != 100 || good < 45 || good > 50 {
		t.Errorf("goodput: %d samples, %v good; want 100 and 50 less any slow scheduling", c, good)
	}
	c, backend := total(sum, "backend_reads", nil)
	if c != 100 || backend != 50 {
		t.Errorf("backend_reads: %d samples summing to %v; want 100 and 50", c, backend)
	}
	if c, _ := total(sum, "iterations", map[string]string{"scenario": "s"}); c != 100 {
		t.Errorf("iterations %d, want 100", c)
	}
}
