package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/chaosrun/chaosrun/targets/platform"
)

// grpcRoute is the HTTP route a gRPC method is served by.
type grpcRoute struct{ method, path string }

// addGRPCRoute makes the route of pattern ("METHOD /path", no wildcards) a
// gRPC method too (platform.GRPCMethod); other patterns stay HTTP only.
func (s *Server) addGRPCRoute(pattern string) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = http.MethodPost, pattern
	}
	full, ok := platform.GRPCMethod(path)
	if !ok {
		return
	}
	s.grpcMu.Lock()
	s.grpcRoutes[full] = grpcRoute{method, path}
	s.grpcMu.Unlock()
}

// newGRPC returns the gRPC server of s's routes: every call goes to the
// route's HTTP handler, through the same admission path as an HTTP request.
func (s *Server) newGRPC() *grpc.Server {
	return grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		return s.serveGRPC(stream)
	}))
}

// root sends gRPC calls (HTTP/2, content-type application/grpc) to the
// gRPC server and everything else to the HTTP routes.
func (s *Server) root() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			s.grpc.ServeHTTP(w, r)
			return
		}
		s.mux.ServeHTTP(w, r)
	})
}

// serveGRPC serves one unary call: the request Value as the JSON body of
// the route's request, the caller's metadata as headers, grpc-timeout as
// platform.HeaderDeadline (unless the caller sent that header), and the
// answer's JSON as the response Value or its status as the call's.
func (s *Server) serveGRPC(stream grpc.ServerStream) error {
	full, _ := grpc.MethodFromServerStream(stream)
	s.grpcMu.RLock()
	rt, ok := s.grpcRoutes[full]
	s.grpcMu.RUnlock()
	if !ok {
		return status.Errorf(codes.Unimplemented, "%s: no method %s (have: %s)", s.name, full, strings.Join(s.grpcMethods(), ", "))
	}
	in := new(structpb.Value)
	if err := stream.RecvMsg(in); err != nil {
		return status.Errorf(codes.InvalidArgument, "%s: %s: request: %v", s.name, full, err)
	}
	ctx, cancel := grpcRequestContext(stream.Context())
	defer cancel()
	req, err := s.grpcRequest(ctx, rt, in)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "%s: %s: %v", s.name, full, err)
	}
	rec := &bufferedResponse{header: http.Header{}, code: http.StatusOK}
	s.mux.ServeHTTP(rec, req)
	if rec.code < 200 || rec.code > 299 {
		return s.grpcStatus(stream, rec)
	}
	out := structpb.NewNullValue()
	if body := bytes.TrimSpace(rec.body.Bytes()); len(body) > 0 {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			return status.Errorf(codes.Internal, "%s: %s: answer is not JSON: %v", s.name, full, err)
		}
		if out, err = structpb.NewValue(v); err != nil {
			return status.Errorf(codes.Internal, "%s: %s: answer: %v", s.name, full, err)
		}
	}
	return stream.SendMsg(out)
}

// grpcRequestContext is the handler's context: cancelled when the caller
// cancels the call, but not at grpc-timeout, which the platform's own
// deadline handling enforces (or, with deadlines off, only records) as it
// does HeaderDeadline.
func grpcRequestContext(call context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(call))
	stop := context.AfterFunc(call, func() {
		if errors.Is(call.Err(), context.Canceled) {
			cancel()
		}
	})
	return ctx, func() { stop(); cancel() }
}

// grpcRequest builds the HTTP request a call stands for.
func (s *Server) grpcRequest(ctx context.Context, rt grpcRoute, in *structpb.Value) (*http.Request, error) {
	var body io.Reader = http.NoBody
	if _, null := in.GetKind().(*structpb.Value_NullValue); !null && in.GetKind() != nil {
		b, err := json.Marshal(in.AsInterface())
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, rt.method, rt.path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	md, _ := metadata.FromIncomingContext(ctx)
	for k, vs := range md {
		if !strings.HasPrefix(k, ":") && !strings.HasPrefix(k, "grpc-") && k != "content-type" && k != "te" {
			req.Header[textproto.CanonicalMIMEHeaderKey(k)] = vs
		}
	}
	if dl, ok := ctx.Deadline(); ok && req.Header.Get(platform.HeaderDeadline) == "" {
		req.Header.Set(platform.HeaderDeadline, platform.FormatBudget(time.Until(dl)))
	}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		req.RemoteAddr = p.Addr.String()
	}
	return req, nil
}

// grpcStatus turns a non-2xx answer into the call's status: the code of
// its HTTP status, the error body's message, and trailers with the HTTP
// status, the reject reason and, for back pressure, the pushback.
func (s *Server) grpcStatus(stream grpc.ServerStream, rec *bufferedResponse) error {
	var eb platform.ErrorBody
	_ = json.Unmarshal(rec.body.Bytes(), &eb)
	msg := eb.Error
	if msg == "" {
		msg = strings.TrimSpace(rec.body.String())
	}
	bp := rec.code == http.StatusServiceUnavailable && rec.header.Get(platform.HeaderBackpressure) != ""
	md := metadata.Pairs(platform.TrailerHTTPStatus, strconv.Itoa(rec.code))
	if reason := cmp.Or(eb.Reason, rec.header.Get(platform.RejectHeader)); reason != "" {
		md.Set(platform.TrailerReason, reason)
	}
	if bp {
		wait := platform.ParseRetryAfter(rec.header.Get(platform.HeaderRetryAfter))
		md.Set(platform.TrailerPushback, strconv.FormatInt(wait.Milliseconds(), 10))
	}
	stream.SetTrailer(md)
	return status.Error(platform.GRPCCodeOf(rec.code, bp), msg)
}

// grpcMethods lists the gRPC methods served, sorted.
func (s *Server) grpcMethods() []string {
	s.grpcMu.RLock()
	defer s.grpcMu.RUnlock()
	return slices.Sorted(maps.Keys(s.grpcRoutes))
}

// bufferedResponse is the http.ResponseWriter a gRPC call's route writes
// to: status, headers and body, kept for the call's answer.
type bufferedResponse struct {
	header http.Header
	code   int
	wrote  bool
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(code int) {
	if !b.wrote {
		b.code, b.wrote = code, true
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.wrote = true
	if b.body.Len()+len(p) > 4<<20 {
		return 0, fmt.Errorf("answer over 4 MiB")
	}
	return b.body.Write(p)
}
