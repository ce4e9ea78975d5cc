package native

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/models/arrival"
	"github.com/chaosrun/chaosrun/models/client"
	"github.com/chaosrun/chaosrun/models/keys"
)

// serveEnv makes the test binary a bare HTTP server (GET / answers "ok"),
// so that benchmarks measure the client's CPU, not the server's.
const serveEnv = "CHAOSRUN_NATIVE_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) != "" {
		serve()
		return
	}
	os.Exit(m.Run())
}

// serve listens on loopback, prints its address and serves until stdin
// closes (its parent is gone).
func serve() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, "ok")
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Println(ln.Addr().String())
	_, _ = io.Copy(io.Discard, os.Stdin)
}

var server struct {
	once  sync.Once
	url   string
	err   error
	stdin io.WriteCloser // open for the test binary's life: the server ends with it
}

// serverURL starts the server process once per test binary.
func serverURL(tb testing.TB) string {
	server.once.Do(func() {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), serveEnv+"=1")
		server.stdin, _ = cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if server.err = cmd.Start(); server.err != nil {
			return
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || strings.HasPrefix(line, "error") {
			server.err = fmt.Errorf("bench server: %q %v", line, err)
			return
		}
		server.url = "http://" + strings.TrimSpace(line)
	})
	if server.err != nil {
		tb.Fatal(server.err)
	}
	return server.url
}

// cpuTime is this process's user and system CPU so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchRate is the native engine's arrival rate in the cost benchmarks:
// well under this machine's ceiling, so that the cost is per request and
// not per overload.
func benchRate() float64 {
	if r, err := strconv.ParseFloat(os.Getenv("CHAOSRUN_NATIVE_BENCH_RATE"), 64); err == nil && r > 0 {
		return r
	}
	return 5000
}

// BenchmarkRequestCost compares the CPU one request costs this process:
// a bare net/http client loop (16 goroutines, as fast as they go) and the
// native engine at a fixed open-model rate, bare and with smart clients
// and Zipf keys. Report: cpu-µs/req (the figure to compare), req/s.
func BenchmarkRequestCost(b *testing.B) {
	url := serverURL(b)
	b.Run("bare-net-http", func(b *testing.B) { benchBare(b, url) })
	b.Run("native", func(b *testing.B) { benchNative(b, url, false) })
	b.Run("native-smart-zipf", func(b *testing.B) { benchNative(b, url, true) })
}

func benchBare(b *testing.B, url string) {
	c := &http.Client{Transport: Transport(64)}
	defer c.CloseIdleConnections()
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	cpu0, t0 := cpuTime(), time.Now()
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				req, _ := http.NewRequest(http.MethodGet, url+"/", nil)
				resp, err := c.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	report(b, cpuTime()-cpu0, time.Since(t0), 0)
}

func benchNative(b *testing.B, url string, smart bool) {
	rate := benchRate()
	st := Stream{Name: "bench", Targets: []string{url}, Method: "GET", Path: "/", Timeout: 5 * time.Second,
		Arrival: arrival.Constant(rate, 0, time.Duration(float64(b.N)/rate*float64(time.Second))),
		Tags:    map[string]string{"api": "Bench"}}
	if smart {
		st.Path = "/?key={key}"
		st.Keys = map[string]Keys{"key": {Config: keys.Config{Kind: keys.Zipf, N: 1 << 20, S: 1.1, HotKeys: 100, Seed: 1}, Prefix: "k"}}
		st.Tags["key_class"] = "{key.class}"
		cfg := client.Defaults(client.ModelSmart)
		cfg.Deadline = 2 * time.Second
		st.Client = &Client{Config: cfg, Tier: "critical", Headers: client.DefaultHeaderNames}
	}
	out := &memOut{}
	b.ResetTimer()
	cpu0, t0 := cpuTime(), time.Now()
	if _, err := Run(context.Background(), Spec{Streams: []Stream{st}}, Shard{}, out); err != nil {
		b.Fatal(err)
	}
	sent, dropped := out.sentDropped()
	report(b, cpuTime()-cpu0, time.Since(t0), dropped)
	if int(sent+dropped) != b.N {
		b.Errorf("%v sent + %v dropped of %d arrivals", sent, dropped, b.N)
	}
}

// sentDropped sums http_reqs and dropped_iterations over what was written.
func (m *memOut) sentDropped() (sent, dropped float64) {
	for _, w := range m.windows {
		for _, s := range w.Series {
			switch s.Metric {
			case "http_reqs":
				sent += s.Sum
			case "dropped_iterations":
				dropped += s.Sum
			}
		}
	}
	return sent, dropped
}

func report(b *testing.B, cpu, wall time.Duration, dropped float64) {
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/req")
	b.ReportMetric(float64(b.N)/wall.Seconds(), "req/s")
	b.ReportMetric(dropped, "dropped")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkRateCeiling steps the native engine's open-model rate against
// the server process and logs, for each rate, what was sent, dropped and
// the CPU per request, bare and with smart clients and Zipf keys. It
// generates heavy load, so it is a benchmark (go test runs it only with
// -bench): CHAOSRUN_NATIVE_CEILING lists the rates (default
// "10000,20000,30000"), e.g.
//
//	go test ./workloads/native -run '^$' -bench RateCeiling -benchtime 1x -cpuprofile cpu.out
//
// `go run ./bench` measures the same against k6, vegeta and wrk in one run.
func BenchmarkRateCeiling(b *testing.B) {
	rates := os.Getenv("CHAOSRUN_NATIVE_CEILING")
	if rates == "" {
		rates = "10000,20000,30000"
	}
	url := serverURL(b)
	for range b.N {
		stepRates(b, url, rates)
	}
}

// stepRates runs 4 s at each rate in rates, bare then smart, and logs each.
func stepRates(b *testing.B, url, rates string) {
	for _, f := range strings.Split(rates, ",") {
		rate, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			b.Fatal(err)
		}
		for _, smart := range []bool{false, true} {
			st := Stream{Name: "ceiling", Targets: []string{url}, Method: "GET", Path: "/", Timeout: 5 * time.Second,
				Arrival: arrival.Constant(rate, 0, 4*time.Second)}
			if smart {
				st.Path = "/?key={key}"
				st.Keys = map[string]Keys{"key": {Config: keys.Config{Kind: keys.Zipf, N: 1 << 20, S: 1.1, HotKeys: 100, Seed: 1}, Prefix: "k"}}
				st.Tags = map[string]string{"key_class": "{key.class}"}
				cfg := client.Defaults(client.ModelSmart)
				cfg.Deadline = 2 * time.Second
				st.Client = &Client{Config: cfg, Tier: "critical", Headers: client.DefaultHeaderNames}
			}
			out := &memOut{}
			conns, _ := strconv.Atoi(os.Getenv("CHAOSRUN_NATIVE_CONNS")) // 0: the default
			cpu0 := cpuTime()
			if _, err := Run(context.Background(), Spec{Streams: []Stream{st}, Connections: conns}, Shard{}, out); err != nil {
				b.Fatal(err)
			}
			cpu := cpuTime() - cpu0
			sent, dropped := out.sentDropped()
			b.Logf("rate %6.0f/s smart+zipf %-5v: sent %6.0f dropped %5.0f, %.1f µs CPU/request", rate, smart, sent, dropped, float64(cpu.Microseconds())/max(sent, 1))
		}
	}
}
