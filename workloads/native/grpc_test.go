package native

import (
	"bufio"
	"context"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/chaosrun/chaosrun/internal/testenv"
	"github.com/chaosrun/chaosrun/models/arrival"
	"github.com/chaosrun/chaosrun/models/keys"
	"github.com/chaosrun/chaosrun/workloads/grpcproto"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// descriptors compiles one of testdata/protos for a spec.
func descriptors(t testing.TB, file string) []byte {
	t.Helper()
	set, err := grpcproto.Compile(context.Background(), "testdata/protos", []string{file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var listening = regexp.MustCompile(`listening at .*:(\d+)$`)

// startExampleServer runs grpc-go's reflection example server (make
// grpc-example builds it) on a free port and returns its loopback URL.
func startExampleServer(t *testing.T) string {
	t.Helper()
	bin := testenv.RepoTool(t, "grpc-example-server", "grpc-example")
	cmd := exec.Command(bin, "--port", "0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			if m := listening.FindStringSubmatch(s.Text()); m != nil {
				line <- m[1]
			}
		}
	}()
	select {
	case port := <-line:
		return "http://127.0.0.1:" + port
	case <-time.After(10 * time.Second):
		t.Fatal("grpc-example-server did not say where it listens")
	}
	return ""
}

// TestGRPCExampleServer loads a real gRPC server chaosrun did not write
// (grpc-go's reflection example) on both its unary methods, each resolved
// from its .proto file and from the server's reflection service.
func TestGRPCExampleServer(t *testing.T) {
	url := startExampleServer(t)
	hello, echo := descriptors(t, "helloworld.proto"), descriptors(t, "echo.proto")
	mk := func(name, method string, desc []byte, body string) Stream {
		return Stream{Name: name, Targets: []string{url}, Body: body, Timeout: 2 * time.Second,
			Arrival: arrival.Constant(40, 0, time.Second), Expect: []int{0},
			Keys: map[string]Keys{"key": {Config: keys.Config{Kind: keys.Uniform, N: 10, Seed: 3}}},
			GRPC: &GRPC{Method: method, Descriptors: desc, Metadata: map[string]string{"x-caller": "web-{seq}"}}}
	}
	spec := Spec{Seed: 7, Streams: []Stream{
		mk("hello-proto", "/helloworld.Greeter/SayHello", hello, `{"name":"user-{key}"}`),
		mk("echo-proto", "/grpc.examples.echo.Echo/UnaryEcho", echo, `{"message":"m-{seq}"}`),
		mk("hello-reflect", "helloworld.Greeter/SayHello", nil, `{"name":"user-{key}"}`),
		mk("echo-reflect", "grpc.examples.echo.Echo/UnaryEcho", nil, `{"message":"static"}`),
	}}
	spec.Streams[0].Tags = map[string]string{"name": "Hello"}
	sum := runToStream(t, spec, Shard{})
	for _, st := range spec.Streams {
		full := spec.Streams[0].GRPC.Method
		if strings.Contains(st.GRPC.Method, "Echo") {
			full = "/grpc.examples.echo.Echo/UnaryEcho"
		}
		name := full
		if st.Tags["name"] != "" {
			name = st.Tags["name"]
		}
		short := full[strings.LastIndex(full, "/")+1:] // k6's method tag: the method's own name
		n, _ := total(sum, "grpc_req_duration", map[string]string{"scenario": st.Name, "status": "0", "name": name, "method": short})
		all, _ := total(sum, "grpc_req_duration", map[string]string{"scenario": st.Name})
		checks, passed := rate(sum, "checks", st.Name)
		if n != 40 || all != 40 || checks != 40 || passed != 40 {
			t.Errorf("%s: %d calls with status 0 of %d (want 40), checks %d/%d", st.Name, n, all, passed, checks)
		}
		if h, _ := total(sum, "http_req_duration", map[string]string{"scenario": st.Name}); h != 0 {
			t.Errorf("%s: %d http_req_duration samples", st.Name, h)
		}
	}
}

// rate counts a rate metric's samples and non-zero samples for a stream.
func rate(sum stream.Summary, metric, name string) (n, nonzero int64) {
	for _, w := range sum.Windows {
		for _, s := range w.Series {
			if s.Metric == metric && s.Tags["scenario"] == name {
				n, nonzero = n+s.Count, nonzero+s.NonZero
			}
		}
	}
	return n, nonzero
}

// slowGreeter is an in-process gRPC server whose SayHello answers after
// delay, recording each call's request name and x-caller metadata.
type slowGreeter struct {
	delay   time.Duration
	mu      sync.Mutex
	names   []string
	callers []string
}

func (s *slowGreeter) start(t *testing.T) string { return s.startTB(t) }

func (s *slowGreeter) startTB(t testing.TB) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ForceServerCodec(grpcproto.Codec{}))
	srv.RegisterService(&grpc.ServiceDesc{ServiceName: "helloworld.Greeter", HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "SayHello", Handler: s.sayHello}}}, nil)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return "http://" + lis.Addr().String()
}

func (s *slowGreeter) sayHello(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	var req grpcproto.Raw
	if err := dec(&req); err != nil {
		return nil, err
	}
	md, _ := metadata.FromIncomingContext(ctx)
	s.mu.Lock()
	s.names = append(s.names, string(req.B))
	s.callers = append(s.callers, strings.Join(md.Get("x-caller"), ","))
	s.mu.Unlock()
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
	}
	return &grpcproto.Raw{}, nil
}

// TestGRPCDeadlineMetadataAndDrops: a call whose deadline is shorter than
// the server's delay ends DEADLINE_EXCEEDED (status "4") and fails its
// check; a longer one is OK; metadata and bodies carry each arrival's
// keys; a stream with two workers drops the arrivals that find them busy.
func TestGRPCDeadlineMetadataAndDrops(t *testing.T) {
	g := &slowGreeter{delay: 200 * time.Millisecond}
	url := g.start(t)
	hello := descriptors(t, "helloworld.proto")
	mk := func(name string, rate float64, deadline time.Duration, workers int) Stream {
		return Stream{Name: name, Targets: []string{url}, Body: `{"name":"user-{seq}"}`, Timeout: 5 * time.Second,
			Arrival: arrival.Constant(rate, 0, time.Second), Expect: []int{0}, Workers: workers,
			GRPC: &GRPC{Method: "/helloworld.Greeter/SayHello", Descriptors: hello, Deadline: deadline,
				Metadata: map[string]string{"x-caller": name + "-{seq}"}}}
	}
	spec := Spec{Seed: 1, Streams: []Stream{mk("short", 10, 50*time.Millisecond, 0), mk("long", 10, time.Second, 0), mk("bounded", 40, time.Second, 2)}}
	sum := runToStream(t, spec, Shard{})
	if n, _ := total(sum, "grpc_req_duration", map[string]string{"scenario": "short", "status": "4"}); n != 10 {
		t.Errorf("short deadline: %d calls DEADLINE_EXCEEDED, want 10", n)
	}
	if c, ok := rate(sum, "checks", "short"); c != 10 || ok != 0 {
		t.Errorf("short deadline: checks %d/%d passed, want 0/10", ok, c)
	}
	if n, _ := total(sum, "grpc_req_duration", map[string]string{"scenario": "long", "status": "0"}); n != 10 {
		t.Errorf("long deadline: %d calls OK, want 10", n)
	}
	dropped, _ := total(sum, "dropped_iterations", map[string]string{"scenario": "bounded"})
	sent, _ := total(sum, "grpc_req_duration", map[string]string{"scenario": "bounded"})
	if dropped == 0 || sent+int64(dropped) != 40 || sent > 12 {
		t.Errorf("two workers at 40/s on a 200 ms server: %d sent, %d dropped", sent, dropped)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	seen := map[string]bool{}
	for i, c := range g.callers {
		seen[c] = true
		if !strings.Contains(g.names[i], "user-") {
			t.Errorf("request %q has no templated name", g.names[i])
		}
	}
	for _, want := range []string{"short-0", "short-9", "long-5"} {
		if !seen[want] {
			t.Errorf("no call with x-caller %s", want)
		}
	}
}
