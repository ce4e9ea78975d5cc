package httpstage

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	reflectpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
)

// startGRPCUpstream serves grpc-go's own health service (Check and List,
// both unary) and server reflection (a bidirectional stream) on loopback.
func startGRPCUpstream(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	reflection.Register(srv)
	go srv.Serve(ln) //nolint:errcheck // ends with Stop
	t.Cleanup(srv.Stop)
	return ln.Addr().String()
}

// grpcClient connects to addr over plaintext HTTP/2, as gRPC clients do.
func grpcClient(t testing.TB, addr string) *grpc.ClientConn {
	t.Helper()
	c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func grpcToxic(name, kind, path string, a Attributes) Toxic {
	a.Path = path
	return Toxic{Name: name, Type: kind, Attributes: a}
}

const checkMethod, listMethod = "/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/List"

// call makes one unary call and returns its error, its trailer and how
// long it took.
func call(t *testing.T, c *grpc.ClientConn, method string, md ...string) (error, metadata.MD, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if len(md) > 0 {
		ctx = metadata.AppendToOutgoingContext(ctx, md...)
	}
	var trailer metadata.MD
	start := time.Now()
	var err error
	if method == checkMethod {
		_, err = healthpb.NewHealthClient(c).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer))
	} else {
		_, err = healthpb.NewHealthClient(c).List(ctx, &healthpb.HealthListRequest{}, grpc.Trailer(&trailer))
	}
	return err, trailer, time.Since(start)
}

// TestGRPCThroughTheStage: gRPC calls through the stage reach the real
// server unchanged, and each gRPC toxic acts on the method it matches
// only, on the same multiplexed connection.
func TestGRPCThroughTheStage(t *testing.T) {
	up := startGRPCUpstream(t)
	for _, tc := range []struct {
		name     string
		toxic    *Toxic
		md       []string
		wantCode codes.Code // on Check; List always OK
		slow     bool       // Check delayed ≥ 200 ms
	}{
		{"no toxic", nil, nil, codes.OK, false},
		{"error on Check", ptr(grpcToxic("e", KindGRPCError, checkMethod, Attributes{Code: 8, PushbackMS: 250})), nil, codes.ResourceExhausted, false},
		{"error on another service", ptr(grpcToxic("e", KindGRPCError, "/helloworld.Greeter/*", Attributes{})), nil, codes.OK, false},
		{"error on one caller", ptr(Toxic{Name: "e", Type: KindGRPCError, Attributes: Attributes{Header: map[string]string{"x-caller": "rogue-*"}}}), []string{"x-caller", "rogue-7"}, codes.Unavailable, false},
		{"latency on Check", ptr(grpcToxic("l", KindGRPCLatency, "/grpc.health.v1.Health/Ch*", Attributes{Latency: 200})), nil, codes.OK, true},
		{"reset on Check", ptr(grpcToxic("r", KindGRPCReset, checkMethod, Attributes{})), nil, codes.Internal, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startStage(t, up)
			if tc.toxic != nil {
				if _, err := s.Add(*tc.toxic); err != nil {
					t.Fatal(err)
				}
			}
			c := grpcClient(t, s.Addr())
			err, trailer, took := call(t, c, checkMethod, tc.md...)
			if got := status.Code(err); got != tc.wantCode {
				t.Fatalf("Check: %v, want %s", err, tc.wantCode)
			}
			if tc.toxic != nil && tc.toxic.Attributes.PushbackMS > 0 {
				if got := trailer.Get("grpc-retry-pushback-ms"); len(got) != 1 || got[0] != strconv.FormatInt(tc.toxic.Attributes.PushbackMS, 10) {
					t.Errorf("pushback trailer %v, want %d", got, tc.toxic.Attributes.PushbackMS)
				}
			}
			if tc.slow != (took >= 200*time.Millisecond) {
				t.Errorf("Check took %s; delayed: want %v", took, tc.slow)
			}
			// The other method on the same connection (from no particular
			// caller) is untouched, and so is a bidirectional stream.
			if err, _, took := call(t, c, listMethod); err != nil || took >= 200*time.Millisecond {
				t.Errorf("List: %v in %s, want OK and fast", err, took)
			}
			if err := listServices(c); err != nil {
				t.Errorf("reflection stream: %v", err)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// listServices asks the reflection service for the server's services.
func listServices(c *grpc.ClientConn) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := reflectpb.NewServerReflectionClient(c).ServerReflectionInfo(ctx)
	if err != nil {
		return err
	}
	if err := st.Send(&reflectpb.ServerReflectionRequest{MessageRequest: &reflectpb.ServerReflectionRequest_ListServices{}}); err != nil {
		return err
	}
	resp, err := st.Recv()
	if err != nil {
		return err
	}
	if len(resp.GetListServicesResponse().GetService()) < 2 {
		return errors.New("fewer than 2 services listed")
	}
	return st.CloseSend()
}

// TestGRPCGoAway: grpc_reset with goaway ends the client's connection with
// GOAWAY; the client reconnects and later calls succeed once the toxic is
// gone.
func TestGRPCGoAway(t *testing.T) {
	s := startStage(t, startGRPCUpstream(t), grpcToxic("g", KindGRPCReset, checkMethod, Attributes{GoAway: 1}))
	c := grpcClient(t, s.Addr())
	if err, _, _ := call(t, c, checkMethod); status.Code(err) == codes.OK {
		t.Fatal("Check succeeded through a goaway toxic")
	}
	if _, err := s.Remove("g"); err != nil {
		t.Fatal(err)
	}
	if err, _, _ := call(t, c, checkMethod); err != nil {
		t.Errorf("Check after the GOAWAY, toxic removed: %v", err)
	}
}

// TestGRPCToxicityIsSeeded: the same seed picks the same calls.
func TestGRPCToxicityIsSeeded(t *testing.T) {
	up := startGRPCUpstream(t)
	pattern := func() string {
		tox := 0.5
		s := startStage(t, up, Toxic{Name: "e", Type: KindGRPCError, Toxicity: &tox, Attributes: Attributes{Path: checkMethod, Seed: 42}})
		c := grpcClient(t, s.Addr())
		var b []byte
		for range 40 {
			err, _, _ := call(t, c, checkMethod)
			b = append(b, "01"[min(int(status.Code(err)), 1)])
		}
		return string(b)
	}
	a, b := pattern(), pattern()
	if a != b {
		t.Errorf("same seed, different picks:\n%s\n%s", a, b)
	}
	if n := len(a) - len(replaceAll(a, "1")); n < 8 || n > 32 {
		t.Errorf("%d of 40 calls answered at toxicity 0.5: %s", n, a)
	}
}

func replaceAll(s, drop string) string {
	out := make([]byte, 0, len(s))
	for i := range len(s) {
		if s[i] != drop[0] {
			out = append(out, s[i])
		}
	}
	return string(out)
}

// TestGRPCConcurrentCallsOneConnection: 200 calls in flight on one
// connection, half of them to a method a toxic answers, all come back
// with the right outcome (streams are multiplexed, answers not mixed up).
func TestGRPCConcurrentCallsOneConnection(t *testing.T) {
	s := startStage(t, startGRPCUpstream(t), grpcToxic("e", KindGRPCError, listMethod, Attributes{Code: 5}))
	c := grpcClient(t, s.Addr())
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	for i := range 200 {
		wg.Go(func() {
			method, want := checkMethod, codes.OK
			if i%2 == 1 {
				method, want = listMethod, codes.NotFound
			}
			if err, _, _ := call(t, c, method); status.Code(err) != want {
				errs <- method + ": " + status.Code(err).String()
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if tx, _ := s.Get("e"); tx.Stats.Matched != 100 || tx.Stats.Seen != 200 {
		t.Errorf("stats %+v, want 200 seen, 100 matched", *tx.Stats)
	}
}

// TestIsH2: the preface is recognised, and anything else is told apart at
// its first byte that differs, without waiting for more.
func TestIsH2(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{http2Preface, true},
		{http2Preface + "\x00\x00\x00\x04", true},
		{"GET / HTTP/1.1\r\n\r\n", false},
		{"PRI * HTTP/1.1\r\n", false},
		{"P", false}, // cut short
		{"", false},
	} {
		r := bufio.NewReader(strings.NewReader(tc.in))
		if got := isH2(r); got != tc.want {
			t.Errorf("isH2(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

const http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// TestGRPCKindsLeaveOtherHTTP2Alone: an HTTP/2 request that is not a gRPC
// call is forwarded even when a gRPC toxic matches every path (grpc-go
// then refuses its content type itself: 415).
func TestGRPCKindsLeaveOtherHTTP2Alone(t *testing.T) {
	s := startStage(t, startGRPCUpstream(t), grpcToxic("e", KindGRPCError, "*", Attributes{}))
	client := &http.Client{Transport: &http2.Transport{AllowHTTP: true,
		DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}}, Timeout: 5 * time.Second}
	for _, tc := range []struct {
		contentType string
		want        int
	}{{"text/plain", http.StatusUnsupportedMediaType}, {"application/grpc", http.StatusOK}} {
		resp, err := client.Post("http://"+s.Addr()+checkMethod, tc.contentType, strings.NewReader(""))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: HTTP %d, want %d", tc.contentType, resp.StatusCode, tc.want)
		}
		if got := resp.Header.Get("Grpc-Message"); (tc.want == http.StatusOK) != strings.Contains(got, "chaosrun") {
			t.Errorf("%s: grpc-message %q", tc.contentType, got)
		}
	}
}

// arrivalHealth is grpc-go's health service that notes when each Check
// reaches it.
type arrivalHealth struct {
	*health.Server
	at chan time.Time
}

func (h *arrivalHealth) Check(ctx context.Context, in *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	h.at <- time.Now()
	return h.Server.Check(ctx, in)
}

// TestGRPCLatencyPhase: grpc_latency holds a call before it reaches the
// server, or with response: 1 forwards it at once and holds the answer's
// headers; either way the caller waits the latency.
func TestGRPCLatencyPhase(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := &arrivalHealth{Server: health.NewServer(), at: make(chan time.Time, 1)}
	healthpb.RegisterHealthServer(srv, hs)
	go srv.Serve(ln) //nolint:errcheck // ends with Stop
	t.Cleanup(srv.Stop)
	const latency = 300 * time.Millisecond
	for _, tc := range []struct {
		name     string
		response int
	}{{"before forwarding", 0}, {"on the response headers", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			s := startStage(t, ln.Addr().String(), grpcToxic("l", KindGRPCLatency, checkMethod, Attributes{Latency: latency.Milliseconds(), Response: tc.response}))
			c := healthpb.NewHealthClient(grpcClient(t, s.Addr()))
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			start := time.Now()
			if _, err := c.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
				t.Fatal(err)
			}
			took, reached := time.Since(start), (<-hs.at).Sub(start)
			t.Logf("reached the server after %s, answered after %s", reached.Round(time.Millisecond), took.Round(time.Millisecond))
			if took < latency {
				t.Errorf("answered after %s, want at least %s", took, latency)
			}
			if held := reached >= latency; held != (tc.response == 0) {
				t.Errorf("reached the server after %s; want the call held there: %v", reached, tc.response == 0)
			}
		})
	}
}
