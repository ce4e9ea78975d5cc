package native

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// fakeTransport answers every request at once, with a status chosen from
// the request (status(req)); it counts what it saw.
type fakeTransport struct {
	status func(*http.Request) int
	n      atomic.Int64
}

func (f *fakeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	f.n.Add(1)
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	code := 200
	if f.status != nil {
		code = f.status(r)
	}
	return &http.Response{StatusCode: code, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
}
