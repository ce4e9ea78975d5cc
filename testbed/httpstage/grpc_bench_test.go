package httpstage

import (
	"context"
	"slices"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// BenchmarkGRPCUnary calls grpc-go's health Check on loopback directly and
// through a stage with a gRPC toxic on another method, in the same run;
// each reports its median call (µs): the stage's cost is the difference
// (its goal: at most 100 µs).
func BenchmarkGRPCUnary(b *testing.B) {
	up := startGRPCUpstream(b)
	stage := startStage(b, up, grpcToxic("e", KindGRPCError, listMethod, Attributes{}))
	for _, bc := range []struct{ name, addr string }{{"direct", up}, {"stage", stage.Addr()}} {
		b.Run(bc.name, func(b *testing.B) {
			hc := healthpb.NewHealthClient(grpcClient(b, bc.addr))
			ctx := context.Background()
			if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
				b.Fatal(err)
			}
			took := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(t0))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "median-µs")
		})
	}
}
