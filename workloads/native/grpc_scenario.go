package native

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads/grpcproto"
)

// grpcFromScenario is a scenario stream's gRPC call as the spec carries
// it: the .proto file compiled (relative to the scenario's folder dir)
// into the descriptors, the expected code names as numbers.
func grpcFromScenario(dir string, st *scenario.Stream) (*GRPC, []int, error) {
	g := st.GRPC
	m, err := grpcproto.ParseMethod(g.Method)
	if err != nil {
		return nil, nil, err
	}
	out := &GRPC{Method: m.Full(), Metadata: maps.Clone(g.Metadata), Deadline: g.Deadline.Std()}
	if g.Proto != "" {
		set, err := grpcproto.Compile(context.Background(), dir, []string{g.Proto}, g.ImportPaths)
		if err != nil {
			return nil, nil, err
		}
		if out.Descriptors, err = proto.Marshal(set); err != nil {
			return nil, nil, err
		}
	}
	var codes []int
	for _, c := range g.Expect {
		codes = append(codes, scenario.GRPCCode(c))
	}
	return out, codes, nil
}

// CheckGRPC checks a native workload's gRPC streams that name a .proto
// file (path is the scenario file's): the file compiles, defines the
// method, which is unary, and the body, rendered with sample keys, is a
// valid request. Problems are placed at their fields.
func CheckGRPC(sc *scenario.Scenario, path string) error {
	var errs scenario.Errors
	for _, name := range sc.Workload.StreamOrder {
		st := sc.Workload.Streams[name]
		if st == nil || st.GRPC == nil || st.GRPC.Proto == "" {
			continue
		}
		if e := checkGRPCStream(sc, filepath.Dir(path), "workload.streams."+name, st); e != nil {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// checkGRPCStream checks one stream at p; dir is the scenario's folder.
func checkGRPCStream(sc *scenario.Scenario, dir, p string, st *scenario.Stream) *scenario.Error {
	g := st.GRPC
	m, err := grpcproto.ParseMethod(g.Method)
	if err != nil {
		return sc.Problem(p+".grpc.method", grpcproto.MethodForm, "%v", err)
	}
	if !protoExists(dir, g.Proto, g.ImportPaths) {
		return sc.Problem(p+".grpc.proto", "a .proto file relative to the scenario's folder or an import path", "no file %s", g.Proto)
	}
	set, err := grpcproto.Compile(context.Background(), dir, []string{g.Proto}, g.ImportPaths)
	if err != nil {
		return sc.Problem(p+".grpc.proto", "", "%s does not compile: %v", g.Proto, err)
	}
	files, err := grpcproto.Files(set)
	if err != nil {
		return sc.Problem(p+".grpc.proto", "", "%s: %v", g.Proto, err)
	}
	md, err := grpcproto.Find(files, m)
	if err != nil {
		allowed := ""
		if a := (*grpcproto.Allowed)(nil); errors.As(err, &a) {
			allowed = allowedNames(a.Names)
		}
		return sc.Problem(p+".grpc.method", allowed, "%v", err)
	}
	return checkBody(sc, p, st, md)
}

// checkBody renders the body with the keys of a few sample arrivals and
// converts each to the method's request.
func checkBody(sc *scenario.Scenario, p string, st *scenario.Stream, md protoreflect.MethodDescriptor) *scenario.Error {
	names := slices.Sorted(maps.Keys(st.Keys))
	t, err := compileTemplate(st.Body, names, false)
	if err != nil {
		return nil // the model's check reports placeholders
	}
	l := &lane{}
	for _, n := range names {
		ks := st.Keys[n]
		v, err := newKeyVar(n, Keys{Config: ks.Config(uint64(sc.Seed)), Prefix: ks.Prefix, Width: ks.Width, Text: ks.Key, Shards: ks.Shards, Only: ks.Only})
		if err != nil {
			return nil // the model's check reports keys
		}
		l.keys = append(l.keys, v)
	}
	d := newDraw(l, uint64(sc.Seed))
	for g := range uint64(3) {
		l.prepareDraw(&d, g)
		body := t.render(nil, &d)
		if _, err := grpcproto.Request(md, body); err != nil {
			return sc.Problem(p+".body", "the request message as JSON (protojson)", "arrival %d's body %q: %v", g, body, err)
		}
	}
	return nil
}

// protoExists reports whether file is in an import path or dir, where
// the compiler looks.
func protoExists(dir, file string, importPaths []string) bool {
	for _, p := range append(slices.Clone(importPaths), ".") {
		if fi, err := os.Stat(filepath.Join(dir, p, file)); err == nil && !fi.IsDir() {
			return true
		}
	}
	return false
}

func allowedNames(names []string) string {
	if len(names) > 12 {
		names = append(names[:12:12], "…")
	}
	return strings.Join(names, ", ")
}
