package cachefront

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/internal/testenv"
	"github.com/chaosrun/chaosrun/targets/platform/server"
)

// redisServer starts the real redis-server (Debian's package) on a free
// port; the test is skipped with the reason when it is not installed
// (scripts/install-deps.sh installs it; CI has it).
func redisServer(t *testing.T) string {
	t.Helper()
	bin := testenv.Tool(t, "redis-server", "redis-server")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("redis-server did not listen")
	return ""
}

// silentServer accepts connections and never answers: a cache that hangs
// until hangUp closes every connection.
func silentServer(t *testing.T) (addr string, hangUp func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(done)
				return
			}
			conns = append(conns, c)
		}
	}()
	var once sync.Once
	hangUp = func() {
		once.Do(func() {
			ln.Close()
			<-done
			for _, c := range conns {
				c.Close()
			}
		})
	}
	t.Cleanup(hangUp)
	return ln.Addr().String(), hangUp
}

func startFront(t *testing.T, addr string, timeout time.Duration) *httptest.Server {
	t.Helper()
	f := &front{Cache: newClient(addr, timeout), Timeout: timeout, TTL: time.Minute}
	t.Cleanup(func() { f.Cache.Close() })
	srv := server.New("cachefront", server.Config{Workers: 8, QueueTimeout: time.Second}, server.NewMetrics(), nil)
	f.Register(srv)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, hc *http.Client, url string) (string, error) {
	t.Helper()
	resp, err := hc.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var body map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s %v", url, resp.Status, body)
	}
	return body["cache"], nil
}

func TestMissThenHitOnRealRedis(t *testing.T) {
	ts := startFront(t, redisServer(t), time.Second)
	for i, want := range []string{"miss", "hit", "hit"} {
		got, err := get(t, ts.Client(), ts.URL+"/item?key=a")
		if err != nil || got != want {
			t.Errorf("request %d: cache %q (%v), want %q", i, got, err, want)
		}
	}
}

// TestTimeoutBypassesHangingCache is the A/B of the protection: with a
// cache timeout a hanging cache is bypassed at once; without one the
// request waits on it.
func TestTimeoutBypassesHangingCache(t *testing.T) {
	addr, hangUp := silentServer(t)
	// The handler waiting on the cache must end before the servers close.
	defer hangUp()
	with := startFront(t, addr, 50*time.Millisecond)
	t0 := time.Now()
	got, err := get(t, with.Client(), with.URL+"/item?key=a")
	if err != nil || got != "bypass" {
		t.Fatalf("with a timeout: cache %q (%v), want bypass", got, err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("with a 50ms cache timeout the request took %s", d)
	}
	without := startFront(t, addr, 0)
	hc := &http.Client{Timeout: 1500 * time.Millisecond}
	if got, err := get(t, hc, without.URL+"/item?key=a"); err == nil {
		t.Errorf("without a timeout the request came back (%q) though the cache never answers", got)
	}
}
