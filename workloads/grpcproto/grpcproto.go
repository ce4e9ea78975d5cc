// Package grpcproto reads what a gRPC stream calls: its method's name, the
// .proto files (compiled in-process) or the server's reflection service
// that describe it, and its request, written as JSON, as wire bytes.
package grpcproto

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/chaosrun/chaosrun/internal/suggest"
)

// Method is a gRPC method's name: package.Service and Method.
type Method struct {
	Service string // fully qualified: helloworld.Greeter
	Name    string // SayHello
}

// Full is the method's path on the wire: /package.Service/Method.
func (m Method) Full() string { return "/" + m.Service + "/" + m.Name }

// MethodForm is what ParseMethod accepts, for error messages.
const MethodForm = "package.Service/Method (a leading / is allowed)"

var (
	serviceName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	methodName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// ParseMethod reads package.Service/Method or /package.Service/Method.
func ParseMethod(s string) (Method, error) {
	svc, name, ok := strings.Cut(strings.TrimPrefix(s, "/"), "/")
	if !ok || !serviceName.MatchString(svc) || !methodName.MatchString(name) {
		return Method{}, fmt.Errorf("invalid gRPC method %q: want %s", s, MethodForm)
	}
	return Method{Service: svc, Name: name}, nil
}

// Compile compiles .proto files in-process. files and importPaths are
// relative to dir (the scenario's folder); imports are looked up in the
// import paths, then in dir, then among the well-known types. It returns
// the files with every dependency, in dependency order.
func Compile(ctx context.Context, dir string, files, importPaths []string) (*descriptorpb.FileDescriptorSet, error) {
	paths := make([]string, 0, len(importPaths)+1)
	for _, p := range importPaths {
		paths = append(paths, filepath.Join(dir, p))
	}
	paths = append(paths, dir)
	c := protocompile.Compiler{
		Resolver:       protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: paths}),
		MaxParallelism: 1,
	}
	out, err := c.Compile(ctx, files...)
	if err != nil {
		return nil, err
	}
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	for _, f := range out {
		addFile(set, f, seen)
	}
	return set, nil
}

// addFile adds f after its dependencies.
func addFile(set *descriptorpb.FileDescriptorSet, f protoreflect.FileDescriptor, seen map[string]bool) {
	if seen[f.Path()] {
		return
	}
	seen[f.Path()] = true
	imps := f.Imports()
	for i := range imps.Len() {
		addFile(set, imps.Get(i).FileDescriptor, seen)
	}
	set.File = append(set.File, protodesc.ToFileDescriptorProto(f))
}

// Files builds the registry of a descriptor set.
func Files(set *descriptorpb.FileDescriptorSet) (*protoregistry.Files, error) {
	return protodesc.NewFiles(set)
}

// Find resolves a unary method in files: an unknown service or method
// says which there are (and the nearest), a streaming one that only
// unary calls are made.
func Find(files *protoregistry.Files, m Method) (protoreflect.MethodDescriptor, error) {
	d, err := files.FindDescriptorByName(protoreflect.FullName(m.Service))
	sd, _ := d.(protoreflect.ServiceDescriptor)
	if err != nil || sd == nil {
		return nil, unknown(fmt.Sprintf("unknown gRPC service %q", m.Service), m.Service, services(files))
	}
	md := sd.Methods().ByName(protoreflect.Name(m.Name))
	if md == nil {
		var names []string
		for i := range sd.Methods().Len() {
			names = append(names, string(sd.Methods().Get(i).Name()))
		}
		return nil, unknown(fmt.Sprintf("service %s has no method %q", m.Service, m.Name), m.Name, names)
	}
	if md.IsStreamingClient() || md.IsStreamingServer() {
		return nil, fmt.Errorf("%s is a streaming method: only unary methods are called (one request, one answer)", m.Full())
	}
	return md, nil
}

// Allowed says which names an unknown-name error offered.
type Allowed struct {
	Msg   string
	Names []string
}

func (e *Allowed) Error() string { return e.Msg }

func unknown(msg, name string, names []string) error {
	slices.Sort(names)
	if n := suggest.Nearest(name, names); n != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", n)
	}
	return &Allowed{Msg: msg, Names: names}
}

// services lists the services of files.
func services(files *protoregistry.Files) []string {
	var out []string
	files.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		for i := range f.Services().Len() {
			out = append(out, string(f.Services().Get(i).FullName()))
		}
		return true
	})
	return out
}

// Request converts a request written as JSON (protojson's mapping) to
// the wire bytes of md's input message; empty JSON is the empty message.
func Request(md protoreflect.MethodDescriptor, js []byte) ([]byte, error) {
	msg := dynamicpb.NewMessage(md.Input())
	if len(strings.TrimSpace(string(js))) > 0 {
		if err := protojson.Unmarshal(js, msg); err != nil {
			return nil, fmt.Errorf("request for %s: %w", md.Input().FullName(), err)
		}
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("request for %s: %w", md.Input().FullName(), err)
	}
	return b, nil
}
