package httpstage

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// TestH2RelayHeldCallsLetOthersPass: with calls held in either direction
// on one connection, the calls around them are forwarded and answered
// meanwhile, and every answer reaches its own call: header blocks are
// encoded again for each peer in the order they are sent, and calls get
// upstream stream ids in the order they are forwarded.
func TestH2RelayHeldCallsLetOthersPass(t *testing.T) {
	up := startGRPCUpstream(t)
	for _, response := range []int{0, 1} {
		s := startStage(t, up, grpcToxic("l", KindGRPCLatency, checkMethod, Attributes{Latency: 150, Response: response}),
			grpcToxic("e", KindGRPCError, listMethod, Attributes{Code: 5, Header: map[string]string{"x-caller": "rogue"}}))
		c := grpcClient(t, s.Addr())
		var wg sync.WaitGroup
		errs := make(chan string, 150)
		var mu sync.Mutex
		var others []time.Duration // the calls no toxic holds
		for i := range 150 {
			wg.Go(func() {
				method, md, want, slow := listMethod, []string{"x-caller", "fine"}, codes.OK, false
				switch i % 3 {
				case 0:
					method, md, slow = checkMethod, nil, true
				case 1:
					md, want = []string{"x-caller", "rogue"}, codes.NotFound
				}
				err, _, took := call(t, c, method, md...)
				if !slow {
					mu.Lock()
					others = append(others, took)
					mu.Unlock()
				}
				if status.Code(err) != want || slow && took < 150*time.Millisecond {
					errs <- method + " " + strings.Join(md, "=") + ": " + status.Code(err).String() + " in " + took.String()
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Errorf("response %d: %s", response, e)
		}
		if tx, _ := s.Get("l"); tx.Stats.Affected != 50 {
			t.Errorf("response %d: latency toxic affected %d calls, want 50", response, tx.Stats.Affected)
		}
		// Held calls in the way of the others would make them wait the
		// latency too.
		slices.Sort(others)
		if med := others[len(others)/2]; med >= 150*time.Millisecond {
			t.Errorf("response %d: the calls no toxic holds took %s (median), as long as the held ones", response, med)
		}
	}
}

// TestH2RelayLargeHeaderBlocks: metadata larger than a frame crosses the
// relay both ways (HEADERS then CONTINUATION frames, encoded again).
func TestH2RelayLargeHeaderBlocks(t *testing.T) {
	big := strings.Repeat("m", 40<<10)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		if got := md.Get("x-big"); len(got) != 1 || got[0] != big {
			return nil, status.Errorf(codes.InvalidArgument, "x-big arrived with %d bytes", len(strings.Join(got, "")))
		}
		grpc.SetHeader(ctx, metadata.Pairs("x-big-answer", big))
		return h(ctx, req)
	}))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(ln) //nolint:errcheck // ends with Stop
	t.Cleanup(srv.Stop)
	s := startStage(t, ln.Addr().String())
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "x-big", big), 5*time.Second)
	defer cancel()
	var header metadata.MD
	if _, err := healthpb.NewHealthClient(grpcClient(t, s.Addr())).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Header(&header)); err != nil {
		t.Fatal(err)
	}
	if got := header.Get("x-big-answer"); len(got) != 1 || got[0] != big {
		t.Errorf("x-big-answer arrived with %d bytes, want %d", len(strings.Join(got, "")), len(big))
	}
}

// TestH2RelayUpstreamGoAway: an upstream that ends its connections every
// 100 ms (GOAWAY, as grpc-go's MaxConnectionAge does) costs the calls
// through the relay nothing: calls it took finish, others are refused
// so the client retries them on a new connection.
func TestH2RelayUpstreamGoAway(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionAge: 100 * time.Millisecond, MaxConnectionAgeGrace: time.Second}))
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	go srv.Serve(ln) //nolint:errcheck // ends with Stop
	t.Cleanup(srv.Stop)
	s := startStage(t, ln.Addr().String())
	c := grpcClient(t, s.Addr())
	var wg sync.WaitGroup
	var failed sync.Map
	deadline := time.Now().Add(time.Second)
	for range 4 {
		wg.Go(func() {
			for n := 0; n < 2000 && time.Now().Before(deadline); n++ {
				if err, _, _ := call(t, c, checkMethod); err != nil {
					failed.Store(err.Error(), true)
				}
			}
		})
	}
	wg.Wait()
	failed.Range(func(k, _ any) bool { t.Errorf("call failed: %s", k); return true })
	if _, tunnels := s.Counts(); tunnels != 0 {
		t.Errorf("%d connections tunnelled, want every one relayed", tunnels)
	}
}

// TestH2RelayFrames: what the relay does with frames a well-behaved
// client rarely sends, read off the wire.
func TestH2RelayFrames(t *testing.T) {
	up := startGRPCUpstream(t)
	s := startStage(t, up, grpcToxic("e", KindGRPCError, listMethod, Attributes{}))
	for _, tc := range []struct {
		name  string
		write func(fr *http2.Framer)
		want  func(f http2.Frame) bool // a frame the client must get
	}{
		{"an answered call's data is credited back", func(fr *http2.Framer) {
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: grpcHeaders(listMethod), EndHeaders: true})
			fr.WriteData(1, false, make([]byte, 1000))
		}, func(f http2.Frame) bool {
			wu, ok := f.(*http2.WindowUpdateFrame)
			return ok && wu.StreamID == 0 && wu.Increment == 1000
		}},
		{"an even stream is a protocol error", func(fr *http2.Framer) {
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 2, BlockFragment: grpcHeaders(checkMethod), EndHeaders: true})
		}, func(f http2.Frame) bool {
			ga, ok := f.(*http2.GoAwayFrame)
			return ok && ga.ErrCode == http2.ErrCodeProtocol
		}},
		{"a padded call is answered", func(fr *http2.Framer) {
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: grpcHeaders(checkMethod), EndHeaders: true})
			fr.WriteDataPadded(1, true, []byte{0, 0, 0, 0, 0}, make([]byte, 40))
		}, func(f http2.Frame) bool {
			mh, ok := f.(*http2.MetaHeadersFrame)
			return ok && mh.StreamEnded() && headerValue(mh, "grpc-status") == "0"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			c.Write([]byte(http2.ClientPreface))
			fr := http2.NewFramer(c, c)
			fr.ReadMetaHeaders = nil
			fr.WriteSettings()
			tc.write(fr)
			rf := http2.NewFramer(nil, c)
			rf.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
			var seen []string
			for {
				f, err := rf.ReadFrame()
				if err != nil {
					t.Fatalf("%v; frames seen: %s", err, strings.Join(seen, ", "))
				}
				if tc.want(f) {
					return
				}
				seen = append(seen, f.Header().Type.String())
				if sf, ok := f.(*http2.SettingsFrame); ok && !sf.IsAck() {
					fr.WriteSettingsAck()
				}
			}
		})
	}
}

func headerValue(f *http2.MetaHeadersFrame, name string) string {
	for _, hf := range f.Fields {
		if hf.Name == name {
			return hf.Value
		}
	}
	return ""
}

// TestH2RelayUpgrade: a connection switched to HTTP/2 by an HTTP/1.1
// "Upgrade: h2c" request is relayed as HTTP/2, not tunnelled: the
// upgrading request's answer arrives on stream 1, a gRPC call a toxic
// matches is answered by the stage, and another request is forwarded.
func TestH2RelayUpgrade(t *testing.T) {
	up := httptest.NewServer(h2c.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello "+r.URL.Path)
	}), &http2.Server{}))
	t.Cleanup(up.Close)
	s := startStage(t, up.Listener.Addr().String(), grpcToxic("e", KindGRPCError, checkMethod, Attributes{}))
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "GET /first HTTP/1.1\r\nHost: stage\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: \r\n\r\n")
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil || res.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", res, err)
	}
	io.WriteString(c, http2.ClientPreface)
	fr := http2.NewFramer(c, br)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	fr.WriteSettings()
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: grpcHeaders(checkMethod), EndHeaders: true, EndStream: true})
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 5, BlockFragment: requestHeaders("/second"), EndHeaders: true, EndStream: true})
	got := map[uint32]string{}
	for len(got) < 3 {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("%v; answers so far: %v", err, got)
		}
		switch f := f.(type) {
		case *http2.MetaHeadersFrame:
			if v := headerValue(f, "grpc-status"); v != "" {
				got[f.StreamID] = "grpc-status " + v
			}
		case *http2.DataFrame:
			got[f.StreamID] += string(f.Data())
		case *http2.SettingsFrame:
			if !f.IsAck() {
				fr.WriteSettingsAck()
			}
		}
	}
	want := map[uint32]string{1: "hello /first", 3: "grpc-status 14", 5: "hello /second"}
	if !maps.Equal(got, want) {
		t.Errorf("answers by stream %v, want %v", got, want)
	}
}

// requestHeaders is an HPACK block of a plain GET.
func requestHeaders(path string) []byte {
	var b bytes.Buffer
	enc := hpack.NewEncoder(&b)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":path", path}, {":authority", "stage"}} {
		enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	return b.Bytes()
}
