package metrics

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
)

// otlpWriter sends series to an OTLP/HTTP metrics endpoint through the
// OpenTelemetry SDK's exporter. Points keep the run's times: gauges as
// OTLP gauges, counters as cumulative monotonic sums starting at the run's
// start. Staleness markers have no OTLP form and are left out.
type otlpWriter struct {
	exp   *otlpmetrichttp.Exporter
	res   *resource.Resource
	start time.Time
}

func newOTLPWriter(ctx context.Context, url string, client *http.Client, start time.Time) (*otlpWriter, error) {
	exp, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(url), otlpmetrichttp.WithHTTPClient(client),
		otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: true, InitialInterval: 200 * time.Millisecond, MaxInterval: 2 * time.Second, MaxElapsedTime: 10 * time.Second}))
	if err != nil {
		return nil, fmt.Errorf("otlp %q: %w", url, err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", "chaosrun"))
	return &otlpWriter{exp: exp, res: res, start: start}, nil
}

func (o *otlpWriter) write(ctx context.Context, batch []Series) error {
	rm := ResourceMetrics(batch, o.start)
	rm.Resource = o.res
	if err := o.exp.Export(ctx, &rm); err != nil {
		return fmt.Errorf("otlp: %w", err)
	}
	return nil
}

func (o *otlpWriter) close(ctx context.Context) error { return o.exp.Shutdown(ctx) }

// ResourceMetrics is the OTLP form of series: one metric per name, one
// data point per point and label set (labels become attributes, but job,
// which the resource's service.name says).
func ResourceMetrics(series []Series, start time.Time) metricdata.ResourceMetrics {
	var metrics []metricdata.Metrics
	index := map[string]int{}
	for _, s := range series {
		attrs := make([]attribute.KeyValue, 0, len(s.Labels))
		for _, l := range s.Labels {
			if l.Name != LabelJob {
				attrs = append(attrs, attribute.String(l.Name, l.Value))
			}
		}
		set := attribute.NewSet(attrs...)
		var pts []metricdata.DataPoint[float64]
		for _, p := range s.Points {
			if IsStale(p.V) {
				continue
			}
			dp := metricdata.DataPoint[float64]{Attributes: set, Time: p.T, Value: p.V}
			if s.Kind == Counter {
				dp.StartTime = start
			}
			pts = append(pts, dp)
		}
		if len(pts) == 0 {
			continue
		}
		i, ok := index[s.Name]
		if !ok {
			i = len(metrics)
			index[s.Name] = i
			m := metricdata.Metrics{Name: s.Name, Unit: s.Unit, Data: metricdata.Gauge[float64]{}}
			if s.Kind == Counter {
				m.Data = metricdata.Sum[float64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true}
			}
			metrics = append(metrics, m)
		}
		switch d := metrics[i].Data.(type) {
		case metricdata.Gauge[float64]:
			d.DataPoints = append(d.DataPoints, pts...)
			metrics[i].Data = d
		case metricdata.Sum[float64]:
			d.DataPoints = append(d.DataPoints, pts...)
			metrics[i].Data = d
		}
	}
	return metricdata.ResourceMetrics{ScopeMetrics: []metricdata.ScopeMetrics{{
		Scope:   instrumentation.Scope{Name: "github.com/chaosrun/chaosrun/export/metrics"},
		Metrics: metrics,
	}}}
}
