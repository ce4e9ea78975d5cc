package native

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/scenario"
)

// grpcScenario writes a scenario with one gRPC stream (its grpc: and body
// lines as given) beside a copy of testdata/protos, and loads it.
func grpcScenario(t *testing.T, grpcLines, body string) (*scenario.Scenario, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "protos"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"helloworld.proto", "echo.proto"} {
		b, err := os.ReadFile(filepath.Join("testdata/protos", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "protos", f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	text := "version: 1\nname: g\nservices:\n  greeter:\n    external: 127.0.0.1:50051\nworkload:\n  duration: 5s\n  streams:\n    hello:\n" +
		"      target: greeter\n      arrival: {rate: 10}\n      keys:\n        key: {kind: uniform, n: 10, prefix: u}\n" +
		"      body: '" + body + "'\n      grpc:\n" + grpcLines
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Load(path, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return sc, path
}

// TestCheckGRPC: the engine's check reads the .proto file and places each
// problem at its field's line and column.
func TestCheckGRPC(t *testing.T) {
	const proto = "        proto: protos/helloworld.proto\n"
	for _, tc := range []struct {
		name, grpc, body, want string
	}{
		{"fine", "        method: helloworld.Greeter/SayHello\n" + proto, `{"name":"{key}"}`, ""},
		{"import path", "        method: helloworld.Greeter/SayHello\n        proto: helloworld.proto\n        import_paths: [protos]\n", `{"name":"{key}"}`, ""},
		{"reflect is checked at load start", "        method: helloworld.Nope/X\n        reflect: true\n", `{"nope":1}`, ""},
		{"service typo", "        method: helloworld.Greter/SayHello\n" + proto, `{}`,
			`s.yaml:16:17: workload.streams.hello.grpc.method: unknown gRPC service "helloworld.Greter" (did you mean "helloworld.Greeter"?) (allowed: helloworld.Greeter)`},
		{"method typo", "        method: helloworld.Greeter/SayHi\n" + proto, `{}`,
			`s.yaml:16:17: workload.streams.hello.grpc.method: service helloworld.Greeter has no method "SayHi" (allowed: SayHello)`},
		{"streaming", "        method: grpc.examples.echo.Echo/ClientStreamingEcho\n        proto: protos/echo.proto\n", `{}`,
			`s.yaml:16:17: workload.streams.hello.grpc.method: /grpc.examples.echo.Echo/ClientStreamingEcho is a streaming method: only unary methods are called`},
		{"bad method", "        method: helloworld.Greeter.SayHello\n" + proto, `{}`,
			`s.yaml:16:17: workload.streams.hello.grpc.method: invalid gRPC method "helloworld.Greeter.SayHello"`},
		{"missing file", "        method: helloworld.Greeter/SayHello\n        proto: protos/hello.proto\n", `{}`,
			`s.yaml:17:16: workload.streams.hello.grpc.proto: no file protos/hello.proto (allowed: a .proto file relative to the scenario's folder or an import path)`},
		{"body not JSON once rendered", "        method: helloworld.Greeter/SayHello\n" + proto, `{"name":{key}}`,
			`s.yaml:14:13: workload.streams.hello.body: arrival 0's body "{\"name\":u`},
		{"body field typo", "        method: helloworld.Greeter/SayHello\n" + proto, `{"nam":"{key}"}`,
			`s.yaml:14:13: workload.streams.hello.body: arrival 0's body "{\"nam\":\"u1\"}": request for helloworld.HelloRequest: proto:`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, path := grpcScenario(t, tc.grpc, tc.body)
			err := CheckGRPC(sc, path)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

// TestCheckGRPCBadProto: a .proto that does not compile is reported at
// proto:, with the compiler's own position in the file.
func TestCheckGRPCBadProto(t *testing.T) {
	sc, path := grpcScenario(t, "        method: a.B/C\n        proto: protos/bad.proto\n", `{}`)
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "protos", "bad.proto"), []byte("syntax = \"proto3\";\npackage a;\nservice B { rpc C(M) returns (M); }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := CheckGRPC(sc, path)
	if err == nil || !strings.Contains(err.Error(), "workload.streams.hello.grpc.proto: protos/bad.proto does not compile: ") || !strings.Contains(err.Error(), "bad.proto:3:") {
		t.Fatalf("got %v", err)
	}
}

// TestFromScenarioGRPC: a scenario's gRPC stream becomes a spec stream
// with the .proto compiled in (so a load process needs no file), the
// codes as numbers, and runs: the body and metadata carry the keys.
func TestFromScenarioGRPC(t *testing.T) {
	sc, _ := grpcScenario(t, "        method: helloworld.Greeter/SayHello\n"+
		"        proto: protos/helloworld.proto\n        metadata: {x-caller: \"c-{key}\"}\n        expect: [OK, UNAVAILABLE]\n", `{"name":"user-{key}"}`)
	g := &slowGreeter{}
	url := g.start(t)
	spec, err := FromRun(sc, func(string) ([]string, error) { return []string{url}, nil }, 5, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	st := spec.Streams[0]
	if st.GRPC == nil || st.GRPC.Method != "/helloworld.Greeter/SayHello" || len(st.GRPC.Descriptors) == 0 || !slices.Equal(st.Expect, []int{0, 14}) {
		t.Fatalf("spec stream %+v, grpc %+v", st, st.GRPC)
	}
	sum := runToStream(t, spec, Shard{})
	if n, _ := total(sum, "grpc_req_duration", map[string]string{"scenario": "hello", "status": "0", "name": "/helloworld.Greeter/SayHello"}); n != 10 {
		t.Fatalf("%d OK calls, want 10", n)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, c := range g.callers {
		if !strings.HasPrefix(c, "c-u") || !strings.Contains(g.names[i], "user-u") {
			t.Fatalf("call %d: x-caller %q, request %q", i, c, g.names[i])
		}
	}
}
