package native

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/chaosrun/chaosrun/workloads/grpcproto"
	"github.com/chaosrun/chaosrun/workloads/native/rawio"
)

// GRPC makes a stream's requests unary gRPC calls over HTTP/2 without
// TLS: Body is the request message as JSON (protojson), rendered per
// arrival like an HTTP body.
type GRPC struct {
	// Method is the full method, /package.Service/Method.
	Method string `json:"method"`
	// Descriptors is a serialized FileDescriptorSet that defines the
	// method; empty: the server's reflection service is asked when load
	// starts.
	Descriptors []byte `json:"descriptors,omitempty"`
	// Metadata is sent with each call; values are templates.
	Metadata map[string]string `json:"metadata,omitempty"`
	// Deadline bounds each call; 0: the stream's timeout.
	Deadline time.Duration `json:"deadline,omitempty"`
}

// rawCodec sends the request's bytes as they are and keeps the answer's.
var rawCodec = grpc.ForceCodec(grpcproto.Codec{})

// codeInternal is the code of a request that could not be encoded, as
// grpc-go gives it.
const codeInternal = 13

func (g *GRPC) validate(st *Stream) error {
	if _, err := grpcproto.ParseMethod(g.Method); err != nil {
		return err
	}
	switch {
	case st.Client != nil:
		return fmt.Errorf("a gRPC stream has no client model")
	case g.Deadline < 0:
		return fmt.Errorf("deadline %s: want none or a positive one", g.Deadline)
	}
	return nil
}

// grpcLane is a gRPC stream compiled for a run: its method, connections
// (one per target) and metadata templates.
type grpcLane struct {
	md   protoreflect.MethodDescriptor
	full string
	// method is the method's own name (SayHello), k6's method tag.
	method   string
	conns    []*grpc.ClientConn
	meta     []header
	deadline time.Duration
	// static is the request's bytes when the body has no placeholder.
	static []byte
}

// compileGRPC connects a gRPC lane to its targets and resolves its
// method, from the spec's descriptors or the first target's reflection
// service (bounded by ctx).
func (l *lane) compileGRPC(ctx context.Context, names []string) error {
	g := l.GRPC
	m, err := grpcproto.ParseMethod(g.Method)
	if err != nil {
		return err
	}
	gl := &grpcLane{full: m.Full(), deadline: cmpOr(g.Deadline, l.Timeout)}
	l.grpc = gl
	for _, t := range l.targets {
		c, err := grpc.NewClient(t.host, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithContextDialer(dialRaw))
		if err != nil {
			return fmt.Errorf("gRPC target %s: %w", t.host, err)
		}
		gl.conns = append(gl.conns, c)
	}
	set := &descriptorpb.FileDescriptorSet{}
	if len(g.Descriptors) > 0 {
		err = proto.Unmarshal(g.Descriptors, set)
	} else {
		set, err = grpcproto.Reflect(ctx, gl.conns[0], m.Service)
	}
	if err != nil {
		return fmt.Errorf("gRPC %s: %w", gl.full, err)
	}
	files, err := grpcproto.Files(set)
	if err != nil {
		return fmt.Errorf("gRPC %s: %w", gl.full, err)
	}
	if gl.md, err = grpcproto.Find(files, m); err != nil {
		return err
	}
	gl.method = string(gl.md.Name())
	for _, k := range slices.Sorted(maps.Keys(g.Metadata)) {
		t, err := compileTemplate(g.Metadata[k], names, false)
		if err != nil {
			return fmt.Errorf("metadata %s: %w", k, err)
		}
		gl.meta = append(gl.meta, header{name: k, val: t})
	}
	if l.body.isStatic {
		if gl.static, err = grpcproto.Request(gl.md, []byte(l.body.static)); err != nil {
			return err
		}
	}
	return nil
}

func cmpOr(a, b time.Duration) time.Duration {
	if a > 0 {
		return a
	}
	return b
}

// grpcSetup bounds how long resolving a method by reflection may take.
const grpcSetup = 10 * time.Second

// dialGRPC connects the gRPC lanes and resolves their methods.
func (e *engine) dialGRPC(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, grpcSetup)
	defer cancel()
	for _, l := range e.lanes {
		if l.GRPC == nil {
			continue
		}
		if err := l.compileGRPC(ctx, l.names); err != nil {
			return fmt.Errorf("native workload: stream %q: %w", l.Name, err)
		}
	}
	return nil
}

// closeGRPC closes the gRPC lanes' connections.
func (e *engine) closeGRPC() {
	for _, l := range e.lanes {
		if l.grpc == nil {
			continue
		}
		for _, c := range l.grpc.conns {
			_ = c.Close()
		}
	}
}

// grpcCall is a worker's reusable state for gRPC calls.
type grpcCall struct {
	conn    *grpc.ClientConn
	req     grpcproto.Raw
	resp    grpcproto.Raw
	md      metadata.MD
	bodyErr bool
}

// buildGRPC sets the call up for arrival g: its connection, metadata and
// request bytes.
func (w *worker) buildGRPC(g uint64) {
	gl := w.l.grpc
	if w.gc == nil {
		w.gc = &grpcCall{}
	}
	c := w.gc
	c.conn = gl.conns[g%uint64(len(gl.conns))]
	c.md = metadata.MD{}
	for _, h := range gl.meta {
		c.md[h.name] = []string{string(h.val.render(nil, &w.d))}
	}
	c.bodyErr = false
	if w.l.body.isStatic {
		c.req.B = gl.static
		return
	}
	w.bodyBuf = w.l.body.render(w.bodyBuf[:0], &w.d)
	b, err := grpcproto.Request(gl.md, w.bodyBuf)
	c.req.B, c.bodyErr = b, err != nil
}

// sendGRPC makes one call and returns its code.
func (w *worker) sendGRPC() int {
	c := w.gc
	if c.bodyErr {
		return codeInternal
	}
	ctx, cancel := context.WithTimeout(w.base, w.l.grpc.deadline)
	defer cancel()
	if len(c.md) > 0 {
		ctx = metadata.NewOutgoingContext(ctx, c.md)
	}
	err := c.conn.Invoke(ctx, w.l.grpc.full, &c.req, &c.resp, rawCodec)
	return int(status.Code(err)) // OK (0) for no error
}

// dialRaw dials a gRPC target over TCP with raw reads and writes
// (rawio): the transport's system calls then leave the runtime's monitor
// asleep, as the HTTP client's do.
func dialRaw(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return rawio.Wrap(nc), nil
}
