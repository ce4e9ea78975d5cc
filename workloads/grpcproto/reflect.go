package grpcproto

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// maxReflectFiles bounds the files one reflection look-up may bring.
const maxReflectFiles = 1000

// Reflect asks a server's reflection service (grpc.reflection.v1) for the
// file that defines service and every file it imports, in dependency
// order.
func Reflect(ctx context.Context, conn grpc.ClientConnInterface, service string) (*descriptorpb.FileDescriptorSet, error) {
	st, err := rpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, fmt.Errorf("gRPC reflection: %w", err)
	}
	defer func() { _ = st.CloseSend() }()
	got := map[string]*descriptorpb.FileDescriptorProto{}
	var order []string
	ask := &rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: service}}
	for ask != nil {
		files, err := reflectOnce(st, ask)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if got[f.GetName()] == nil {
				got[f.GetName()] = f
				order = append(order, f.GetName())
			}
		}
		if len(got) > maxReflectFiles {
			return nil, fmt.Errorf("gRPC reflection: more than %d files", maxReflectFiles)
		}
		ask = nil
		for _, name := range order {
			for _, dep := range got[name].GetDependency() {
				if got[dep] == nil {
					ask = &rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: dep}}
				}
			}
		}
	}
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	for _, name := range order {
		addProto(set, got, name, seen)
	}
	return set, nil
}

// reflectOnce sends one request and decodes the files of its answer.
func reflectOnce(st rpb.ServerReflection_ServerReflectionInfoClient, req *rpb.ServerReflectionRequest) ([]*descriptorpb.FileDescriptorProto, error) {
	if err := st.Send(req); err != nil {
		return nil, fmt.Errorf("gRPC reflection: %w", err)
	}
	resp, err := st.Recv()
	if err != nil {
		return nil, fmt.Errorf("gRPC reflection: %w", err)
	}
	if e := resp.GetErrorResponse(); e != nil {
		return nil, fmt.Errorf("gRPC reflection: %s (code %d)", e.GetErrorMessage(), e.GetErrorCode())
	}
	var out []*descriptorpb.FileDescriptorProto
	for _, b := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
		f := &descriptorpb.FileDescriptorProto{}
		if err := proto.Unmarshal(b, f); err != nil {
			return nil, fmt.Errorf("gRPC reflection: a file descriptor: %w", err)
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("gRPC reflection: an answer without files")
	}
	return out, nil
}

// addProto adds file name after its dependencies.
func addProto(set *descriptorpb.FileDescriptorSet, got map[string]*descriptorpb.FileDescriptorProto, name string, seen map[string]bool) {
	f := got[name]
	if seen[name] || f == nil {
		return
	}
	seen[name] = true
	for _, dep := range f.GetDependency() {
		addProto(set, got, dep, seen)
	}
	set.File = append(set.File, f)
}
