package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/chaosrun/chaosrun/targets/platform"
)

// Protocols a client speaks to its dependency (--rpc).
const (
	rpcHTTP = "http"
	rpcGRPC = "grpc"
)

// parseRPC checks an --rpc value.
func parseRPC(s string) (string, error) {
	switch s {
	case rpcHTTP, rpcGRPC:
		return s, nil
	}
	return "", fmt.Errorf("--rpc %q: want %s or %s", s, rpcHTTP, rpcGRPC)
}

// grpcConns are a client's gRPC connections, one per replica (the
// client's own balancer picks the replica of each attempt).
type grpcConns map[string]*grpc.ClientConn

// dialGRPC opens (lazily: grpc-go connects on the first call) a
// connection to each address.
func dialGRPC(addrs []string) (grpcConns, error) {
	conns := grpcConns{}
	for _, a := range addrs {
		cc, err := grpc.NewClient("passthrough:///"+a, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			conns.close()
			return nil, fmt.Errorf("grpc to %s: %w", a, err)
		}
		conns[a] = cc
	}
	return conns, nil
}

func (g grpcConns) close() {
	for _, cc := range g {
		_ = cc.Close()
	}
}

// grpcRoundTrip makes one attempt as a gRPC call: the route's method
// (platform.GRPCMethod), the JSON body as a google.protobuf.Value, the
// attempt's timeout as grpc-timeout and the platform headers as metadata.
// A failed call becomes the *DepError the same answer over HTTP would.
func (c *Client) grpcRoundTrip(ctx, cctx context.Context, addr string, announce time.Duration, send bool, cl *call, classify func(error) *DepError) *DepError {
	full, ok := platform.GRPCMethod(cl.path)
	fail := func(kind ErrKind, err error) *DepError {
		return &DepError{Dep: c.name, Method: full, URL: "grpc://" + addr + full, Kind: kind, Err: err}
	}
	if !ok {
		return fail(KindUnavailable, fmt.Errorf("%s %s has no gRPC method", cl.method, cl.path))
	}
	in := structpb.NewNullValue()
	if cl.body != nil {
		var v any
		if err := json.Unmarshal(cl.body, &v); err != nil {
			return fail(KindUnavailable, fmt.Errorf("request body: %w", err))
		}
		var err error
		if in, err = structpb.NewValue(v); err != nil {
			return fail(KindUnavailable, fmt.Errorf("request body: %w", err))
		}
	}
	md := metadata.MD{}
	if send {
		md.Set(platform.HeaderDeadline, platform.FormatBudget(announce))
	}
	if c.caller != "" {
		md.Set(platform.HeaderCaller, c.caller)
	}
	out, trailer := new(structpb.Value), metadata.MD{}
	err := c.grpc[addr].Invoke(metadata.NewOutgoingContext(cctx, md), full, in, out, grpc.Trailer(&trailer))
	if err != nil {
		return grpcFailure(ctx, cctx, err, trailer, fail, classify)
	}
	if cl.out != nil {
		b, err := json.Marshal(out.AsInterface())
		if err == nil {
			err = json.Unmarshal(b, cl.out)
		}
		if err != nil {
			return fail(KindUnavailable, fmt.Errorf("decode answer: %w", err))
		}
	}
	return nil
}

// grpcFailure classifies a failed call: the caller's or the attempt's
// context ending as over HTTP; a status with grpc-retry-pushback-ms as back
// pressure (a 503 with X-Backpressure and Retry-After over HTTP); UNAVAILABLE
// from no platform server (a connection that failed, a proxy's answer) as
// no answer; any other status as the HTTP status the platform server sent
// in its trailer or, from another server, the code's.
func grpcFailure(ctx, cctx context.Context, err error, trailer metadata.MD, fail func(ErrKind, error) *DepError, classify func(error) *DepError) *DepError {
	st, _ := status.FromError(err)
	if ctx.Err() != nil || cctx.Err() != nil || st.Code() == codes.Canceled {
		return classify(err)
	}
	httpStatus, fromPlatform := 0, false
	if v := trailer.Get(platform.TrailerHTTPStatus); len(v) > 0 {
		httpStatus, _ = strconv.Atoi(v[0])
		fromPlatform = httpStatus >= 400
	}
	pushback, hasPushback := -1, false
	if v := trailer.Get(platform.TrailerPushback); len(v) > 0 {
		if ms, perr := strconv.Atoi(v[0]); perr == nil && ms >= 0 {
			pushback, hasPushback = ms, true
		}
	}
	if !fromPlatform && !hasPushback && st.Code() == codes.Unavailable {
		return fail(KindUnavailable, err)
	}
	if !fromPlatform {
		httpStatus = platform.HTTPStatusOf(st.Code())
	}
	de := fail(KindStatus, errors.New(st.Message()))
	de.Status = httpStatus
	de.Body = platform.ErrorBody{Error: st.Message()}
	if v := trailer.Get(platform.TrailerReason); len(v) > 0 {
		de.Body.Reason = v[0]
	}
	if hasPushback { // the server asks to wait: back pressure, whatever the code
		de.Status, de.Backpressure = 503, true
		de.RetryAfter = time.Duration(pushback) * time.Millisecond
	}
	return de
}
