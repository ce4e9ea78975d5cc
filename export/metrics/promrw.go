package metrics

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/exp/api/remote"
	"google.golang.org/protobuf/encoding/protowire"
)

// writeRequest is a Prometheus remote-write 1.0 request
// (prometheus.WriteRequest of prompb/remote.proto), the version every
// Prometheus with a remote-write receiver reads:
//
//	WriteRequest { repeated TimeSeries timeseries = 1; }
//	TimeSeries   { repeated Label labels = 1; repeated Sample samples = 2; }
//	Label        { string name = 1; string value = 2; }
//	Sample       { double value = 1; int64 timestamp = 2; } // ms since epoch
//
// It is encoded once with protowire and handed to client_golang's remote
// API through the Size/MarshalToSizedBuffer methods it looks for.
type writeRequest struct{ enc []byte }

func newWriteRequest(series []Series) *writeRequest {
	var out []byte
	for _, s := range series {
		var ts []byte
		ts = appendLabel(ts, "__name__", s.Name)
		for _, l := range s.Labels {
			ts = appendLabel(ts, l.Name, l.Value)
		}
		for _, p := range s.Points {
			var smp []byte
			smp = protowire.AppendTag(smp, 1, protowire.Fixed64Type)
			smp = protowire.AppendFixed64(smp, math.Float64bits(p.V))
			smp = protowire.AppendTag(smp, 2, protowire.VarintType)
			smp = protowire.AppendVarint(smp, uint64(p.T.UnixMilli()))
			ts = protowire.AppendTag(ts, 2, protowire.BytesType)
			ts = protowire.AppendBytes(ts, smp)
		}
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, ts)
	}
	return &writeRequest{enc: out}
}

func appendLabel(b []byte, name, value string) []byte {
	var l []byte
	l = protowire.AppendTag(l, 1, protowire.BytesType)
	l = protowire.AppendString(l, name)
	l = protowire.AppendTag(l, 2, protowire.BytesType)
	l = protowire.AppendString(l, value)
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	return protowire.AppendBytes(b, l)
}

// Size is the encoded length.
func (w *writeRequest) Size() int { return len(w.enc) }

// MarshalToSizedBuffer writes the encoding at the end of b (gogo's contract).
func (w *writeRequest) MarshalToSizedBuffer(b []byte) (int, error) {
	if len(b) < len(w.enc) {
		return 0, fmt.Errorf("buffer of %d bytes for a %d-byte request", len(b), len(w.enc))
	}
	return copy(b[len(b)-len(w.enc):], w.enc), nil
}

// promWriter sends series to a Prometheus remote-write endpoint.
type promWriter struct{ api *remote.API }

func newPromWriter(url string, client *http.Client) (*promWriter, error) {
	api, err := remote.NewAPI(url, remote.WithAPIPath(""), remote.WithAPIHTTPClient(client),
		remote.WithAPIBackoff(remote.BackoffConfig{Min: 200 * time.Millisecond, Max: 2 * time.Second, MaxRetries: 3}))
	if err != nil {
		return nil, fmt.Errorf("prometheus remote write %q: %w", url, err)
	}
	return &promWriter{api: api}, nil
}

func (p *promWriter) write(ctx context.Context, batch []Series) error {
	if _, err := p.api.Write(ctx, remote.WriteV1MessageType, newWriteRequest(batch)); err != nil {
		return fmt.Errorf("prometheus remote write: %w", err)
	}
	return nil
}
