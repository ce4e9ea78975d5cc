package grpcproto

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
)

// protos holds the grpc-go examples' .proto files, as a user brings them.
const protos = "../native/testdata/protos"

func TestParseMethod(t *testing.T) {
	for _, tc := range []struct {
		in, full, err string
	}{
		{in: "helloworld.Greeter/SayHello", full: "/helloworld.Greeter/SayHello"},
		{in: "/grpc.examples.echo.Echo/UnaryEcho", full: "/grpc.examples.echo.Echo/UnaryEcho"},
		{in: "Greeter/SayHello", full: "/Greeter/SayHello"},
		{in: "helloworld.Greeter.SayHello", err: "want package.Service/Method"},
		{in: "helloworld.Greeter/", err: "invalid gRPC method"},
		{in: "/SayHello", err: "invalid gRPC method"},
		{in: "a..b/C", err: "invalid gRPC method"},
		{in: "a.b/C/D", err: "invalid gRPC method"},
		{in: "1a.B/C", err: "invalid gRPC method"},
		{in: "", err: "invalid gRPC method"},
	} {
		m, err := ParseMethod(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseMethod(%q) = %v, %v: want error with %q", tc.in, m, err, tc.err)
		case tc.err == "" && (err != nil || m.Full() != tc.full):
			t.Errorf("ParseMethod(%q) = %q, %v: want %q", tc.in, m.Full(), err, tc.full)
		}
	}
}

func compiled(t *testing.T, file string) *protoregistry.Files {
	t.Helper()
	set, err := Compile(context.Background(), protos, []string{file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Files(set)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestFind(t *testing.T) {
	hello, echo := compiled(t, "helloworld.proto"), compiled(t, "echo.proto")
	for _, tc := range []struct {
		name   string
		files  *protoregistry.Files
		method string
		err    string
	}{
		{"unary", hello, "helloworld.Greeter/SayHello", ""},
		{"unary echo", echo, "grpc.examples.echo.Echo/UnaryEcho", ""},
		{"service typo", hello, "helloworld.Greter/SayHello", `unknown gRPC service "helloworld.Greter" (did you mean "helloworld.Greeter"?)`},
		{"method typo", hello, "helloworld.Greeter/SayHelo", `service helloworld.Greeter has no method "SayHelo" (did you mean "SayHello"?)`},
		{"message, not service", hello, "helloworld.HelloRequest/SayHello", "unknown gRPC service"},
		{"server streaming", echo, "grpc.examples.echo.Echo/ServerStreamingEcho", "is a streaming method: only unary methods"},
		{"bidi streaming", echo, "grpc.examples.echo.Echo/BidirectionalStreamingEcho", "is a streaming method"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseMethod(tc.method)
			if err != nil {
				t.Fatal(err)
			}
			md, err := Find(tc.files, m)
			switch {
			case tc.err == "" && (err != nil || string(md.Name()) != m.Name):
				t.Fatalf("Find = %v, %v", md, err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("Find = %v: want %q", err, tc.err)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	if _, err := Compile(context.Background(), protos, []string{"missing.proto"}, nil); err == nil || !strings.Contains(err.Error(), "missing.proto") {
		t.Fatalf("missing file: %v", err)
	}
	dir := t.TempDir()
	writeFile(t, dir, "bad.proto", "syntax = \"proto3\";\nmessage M { strin x = 1; }\n")
	if _, err := Compile(context.Background(), dir, []string{"bad.proto"}, nil); err == nil || !strings.Contains(err.Error(), "bad.proto:2:") {
		t.Fatalf("bad file: %v, want its line", err)
	}
}

func sayHello(t testing.TB) protoreflect.MethodDescriptor {
	set, err := Compile(context.Background(), protos, []string{"helloworld.proto"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Files(set)
	if err != nil {
		t.Fatal(err)
	}
	md, err := Find(files, Method{Service: "helloworld.Greeter", Name: "SayHello"})
	if err != nil {
		t.Fatal(err)
	}
	return md
}

func TestRequest(t *testing.T) {
	md := sayHello(t)
	for _, tc := range []struct {
		js, name, err string
	}{
		{js: `{"name":"user-7"}`, name: "user-7"},
		{js: ``, name: ""},
		{js: `{}`, name: ""},
		{js: `{"name":7}`, err: "helloworld.HelloRequest"},
		{js: `{"nam":"x"}`, err: "unknown field"},
		{js: `{"name":"x"`, err: "helloworld.HelloRequest"},
		{js: `[1]`, err: "helloworld.HelloRequest"},
	} {
		b, err := Request(md, []byte(tc.js))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Request(%s) = %v: want %q", tc.js, err, tc.err)
			}
			continue
		}
		msg := dynamicpb.NewMessage(md.Input())
		if err != nil || proto.Unmarshal(b, msg) != nil {
			t.Fatalf("Request(%s): %v", tc.js, err)
		}
		if got := msg.Get(md.Input().Fields().ByName("name")).String(); got != tc.name {
			t.Errorf("Request(%s): name %q, want %q", tc.js, got, tc.name)
		}
	}
}

func TestCodec(t *testing.T) {
	c := Codec{}
	r := &Raw{B: []byte{1, 2}}
	if b, err := c.Marshal(r); err != nil || len(b) != 2 {
		t.Fatal(b, err)
	}
	if _, err := c.Marshal("x"); err == nil {
		t.Fatal("marshal of a string")
	}
	var out Raw
	if err := c.Unmarshal([]byte{3}, &out); err != nil || out.B[0] != 3 || c.Name() != "proto" {
		t.Fatal(out, err)
	}
	if err := c.Unmarshal(nil, out); err == nil {
		t.Fatal("unmarshal into a value")
	}
}

// FuzzParseMethod: no input panics, and what parses prints back the same.
func FuzzParseMethod(f *testing.F) {
	for _, s := range []string{"helloworld.Greeter/SayHello", "/a.B/C", "a/b/c", "", "/", "a..b/c", "ü.x/y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMethod(s)
		if err != nil {
			return
		}
		again, err := ParseMethod(m.Full())
		if err != nil || again != m {
			t.Fatalf("%q parsed as %+v, its full form %q as %+v, %v", s, m, m.Full(), again, err)
		}
	})
}

// FuzzRequest: any JSON either converts to a request that decodes back or
// is refused; nothing panics.
func FuzzRequest(f *testing.F) {
	md := sayHello(f)
	for _, s := range []string{`{"name":"user-1"}`, `{}`, ``, `{"name":null}`, `{"name":"\u00e9"}`, `{"name":1}`, `[`, `{"name":"a","name":"b"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, js []byte) {
		b, err := Request(md, js)
		if err != nil {
			return
		}
		if err := proto.Unmarshal(b, dynamicpb.NewMessage(md.Input())); err != nil {
			t.Fatalf("%q converted to bytes that do not decode: %v", js, err)
		}
	})
}
