package native

import (
	"context"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/models/arrival"
	"github.com/chaosrun/chaosrun/models/keys"
)

// BenchmarkGRPCSend is one worker's gRPC send path (render the body and
// metadata, convert the JSON, call) against an in-process server that
// answers at once.
func BenchmarkGRPCSend(b *testing.B) {
	g := &slowGreeter{}
	url := g.startTB(b)
	spec := Spec{Seed: 1, Streams: []Stream{{Name: "hello", Targets: []string{url}, Body: `{"name":"user-{key}"}`,
		Timeout: time.Second, Arrival: arrival.Constant(1, 0, time.Second),
		Keys: map[string]Keys{"key": {Config: keys.Config{Kind: keys.Uniform, N: 1000, Seed: 1}}},
		GRPC: &GRPC{Method: "/helloworld.Greeter/SayHello", Descriptors: descriptors(b, "helloworld.proto"),
			Metadata: map[string]string{"x-caller": "web-{seq}"}}}}}
	e, err := newEngine(spec, Shard{Count: 1}, nil, Options{})
	if err == nil {
		err = e.dialGRPC(context.Background())
	}
	if err != nil {
		b.Fatal(err)
	}
	defer e.closeGRPC()
	w := newWorker(e, e.lanes[0], 0, context.Background())
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		w.variant = w.l.prepareDraw(&w.d, uint64(i))
		w.build(uint64(i))
		if code := w.sendGRPC(); code != 0 {
			b.Fatalf("code %d", code)
		}
	}
}
