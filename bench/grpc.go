package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/chaosrun/chaosrun/internal/childproc"
	"github.com/chaosrun/chaosrun/models/arrival"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/testbed/httpstage"
	"github.com/chaosrun/chaosrun/workloads/grpcproto"
	"github.com/chaosrun/chaosrun/workloads/native"
)

// grpcMethod is the unary method both gRPC arms call: grpc-go's example
// Greeter, which answers at once.
const grpcMethod = "/helloworld.Greeter/SayHello"

// grpcSection searches the highest rate of unary gRPC calls that k6's
// k6/net/grpc and the native engine each sustain, open model, against the
// same server: grpc-go's reflection example (not chaosrun's code), a
// separate process. Goal: the native engine at 3× k6, as for HTTP.
func (b *bench) grpcSection(ctx context.Context) (Section, error) {
	sec := Section{Name: "gRPC load generation (grpc-go's example server, separate process)"}
	addr, stop, err := b.startGRPCExample(ctx)
	if err != nil {
		return sec, err
	}
	defer stop()
	// The stage's cost first, on a quiet machine: no generator yet.
	direct, relayed, staged, err := stageCost(ctx, addr)
	if err != nil {
		return sec, err
	}
	b.logf("  one call at a time: median %.1f µs direct, %.1f µs through a TCP relay, %.1f µs through the HTTP stage", direct, relayed, staged)
	steps := b.cfg.searchSteps
	arms := []*loadArm{
		{key: "k", name: "(k) k6, k6/net/grpc, constant-arrival-rate",
			search: &RateSearch{Start: 2000, Max: 40000, MinStep: 250, Resolution: 0.05, MaxSteps: steps},
			run:    func(r int) (loadStep, error) { return b.k6ScriptStep(ctx, b.plainK6, "k", "grpc.js", addr, r, "") }},
		{key: "n", name: "(n) native engine, gRPC streams",
			search: &RateSearch{Start: 4000, Max: 80000, MinStep: 500, Resolution: 0.05, MaxSteps: steps},
			run:    func(r int) (loadStep, error) { return b.nativeGRPCStep(ctx, "n", addr, r) }},
	}
	all, err := b.searchArms(arms)
	if err != nil {
		return sec, err
	}
	detail := map[string]any{"steps": all, "step_seconds": b.cfg.step.Seconds(), "method": grpcMethod,
		"stage_median_us": map[string]float64{"direct": direct, "tcp_relay": relayed, "stage": staged}}
	sec.Detail = detail
	k, n := arms[0].search.Best(), arms[1].search.Best()
	sec.Rows = append(sec.Rows,
		Row{Name: "(k) k6 k6/net/grpc, constant-arrival-rate", Value: float64(k), Unit: "calls/s"},
		Row{Name: "(n) native engine, gRPC unary, open model", Value: float64(n), Unit: "calls/s", Ref: "(k)", RefValue: float64(k), Goal: AtLeast(3)},
	)
	if s, r, ok := commonStep(all, "n", "k"); ok {
		sec.Rows = append(sec.Rows, Row{Name: fmt.Sprintf("(n) native CPU per call at %d/s", s.Rate),
			Value: s.CPUus, Unit: "µs", Ref: "(k)", RefValue: r.CPUus})
	}
	sec.Rows = append(sec.Rows, Row{Name: fmt.Sprintf("HTTP stage, added per unary call (median of %d, one at a time)", stageCalls),
		Value: staged - direct, Unit: "µs", Goal: ValueAtMost(100),
		Note: fmt.Sprintf("direct %.0f µs, through the stage %.0f µs; a gRPC toxic in force on another method", direct, staged)},
		Row{Name: "a plain TCP relay (one more process hop, no HTTP/2), added per call", Value: relayed - direct, Unit: "µs",
			Note: fmt.Sprintf("through the relay %.0f µs: what any proxy in the path adds here", relayed)})
	return sec, nil
}

// stageCalls is how many calls each arm of stageCost makes, in 3 rounds.
const stageCalls = 3000

// stageCost is the median of one SayHello at a time against addr: direct,
// through a plain TCP relay, and through an HTTP stage that holds a gRPC
// toxic on another method (so every call is matched against it); rounds
// interleaved; in µs.
func stageCost(ctx context.Context, addr string) (direct, relayed, staged float64, err error) {
	st, err := httpstage.New("bench", "127.0.0.1:0", addr, nativeSeed)
	if err != nil {
		return 0, 0, 0, err
	}
	defer st.Close()
	if _, err := st.Add(httpstage.Toxic{Name: "other-method", Type: httpstage.KindGRPCError,
		Attributes: httpstage.Attributes{Path: "/helloworld.Greeter/Other"}}); err != nil {
		return 0, 0, 0, err
	}
	relay, err := newTCPRelay(addr)
	if err != nil {
		return 0, 0, 0, err
	}
	defer relay.Close()
	var took [3][]time.Duration
	for range 3 {
		for i, a := range []string{addr, relay.Addr().String(), st.Addr()} {
			d, err := unaryCalls(ctx, a, stageCalls/3)
			if err != nil {
				return 0, 0, 0, err
			}
			took[i] = append(took[i], d...)
		}
	}
	med := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Nanoseconds()) / 1000
	}
	return med(took[0]), med(took[1]), med(took[2]), nil
}

// newTCPRelay relays each connection to its listener to addr, both ways,
// until Close.
func newTCPRelay(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				c.Close()
				continue
			}
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
	return ln, nil
}

// unaryCalls makes n SayHello calls one at a time on a new connection to
// addr (after 100 to warm it) and returns each one's time.
func unaryCalls(ctx context.Context, addr string, n int) ([]time.Duration, error) {
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(grpcproto.Codec{})))
	if err != nil {
		return nil, err
	}
	defer cc.Close()
	req := &grpcproto.Raw{B: []byte{0x0a, 5, 'b', 'e', 'n', 'c', 'h'}} // HelloRequest{name: "bench"}
	out := make([]time.Duration, 0, n)
	for i := range n + 100 {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		t0 := time.Now()
		err := cc.Invoke(cctx, grpcMethod, req, &grpcproto.Raw{})
		d := time.Since(t0)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("SayHello at %s: %w", addr, err)
		}
		if i >= 100 {
			out = append(out, d)
		}
	}
	return out, nil
}

// searchArms runs the arms' rate searches in turn, a step each, until
// every search ends; a step failed by a hair is repeated up to twice.
func (b *bench) searchArms(arms []*loadArm) ([]loadStep, error) {
	var all []loadStep
	for more := true; more; {
		more = false
		for _, a := range arms {
			rate, ok := a.search.Next()
			if !ok {
				continue
			}
			more = true
			var st loadStep
			for try := range 3 {
				var err error
				if st, err = a.run(rate); err != nil {
					return all, fmt.Errorf("%s at %d/s: %w", a.name, rate, err)
				}
				st.Retry = try > 0
				all = append(all, st)
				verdict := "ok"
				if !st.OK {
					verdict = "fail: " + st.Why
				}
				b.logf("  %s at %d/s: %.0f/s, %.1f µs CPU/call, %s", a.key, rate, st.Achieved, st.CPUus, verdict)
				if !st.byAHair() {
					break
				}
			}
			a.search.Record(rate, st.OK)
		}
	}
	return all, nil
}

// nativeGRPCStep runs the native engine's gRPC stream at rate against addr
// for one step (after a warm-up on the same connection) and judges it as
// the k6 arm's.
func (b *bench) nativeGRPCStep(ctx context.Context, arm, addr string, rate int) (loadStep, error) {
	stream := func(name string, start, d time.Duration) native.Stream {
		return native.Stream{Name: name, Targets: []string{"http://" + addr}, Timeout: 10 * time.Second,
			Body: `{"name":"bench"}`, GRPC: &native.GRPC{Method: grpcMethod},
			Arrival: arrival.Constant(float64(rate), start, d), Tags: map[string]string{"name": "bench"}}
	}
	spec := native.Spec{Seed: nativeSeed, Streams: []native.Stream{
		stream(nativeWarmup, 0, stepWarmup), stream(nativeLoad, stepWarmup, b.cfg.step)}}
	return b.nativeSpecStep(ctx, arm, rate, spec, grpcTotals, "grpc_req_duration")
}

// grpcTotals is totalsOf for gRPC calls: each grpc_req_duration sample is
// a call, failed when its status is not 0 (OK).
func grpcTotals(ws []record.Window, scenario string) seriesTotals {
	t := totalsOf(ws, scenario)
	for _, w := range ws {
		for _, s := range w.Series {
			if s.Tags["scenario"] == scenario && s.Metric == "grpc_req_duration" {
				t.reqs += s.Count
				t.failed += s.GRPCFailures()
			}
		}
	}
	return t
}

// startGRPCExample builds grpc-go's reflection example from tools/grpcexample
// and starts it on a free loopback port; stop ends it.
func (b *bench) startGRPCExample(ctx context.Context) (addr string, stop func(), err error) {
	bin := filepath.Join(b.tmp, "grpc-example-server")
	if err := goBuild(ctx, filepath.Join(b.root, "tools", "grpcexample"), bin, "google.golang.org/grpc/examples/features/reflection/server"); err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port))
	cmd.SysProcAttr = childproc.Attr()
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start grpc-example-server: %w", err)
	}
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return addr, stop, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			stop()
			return "", nil, fmt.Errorf("grpc-example-server does not accept on %s within 10 s", addr)
		}
	}
}
