package kvdispatcher

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzRequests sends arbitrary paths, bodies and headers to a real
// dispatcher in front of real shards: it always answers, never with a 500.
func FuzzRequests(f *testing.F) {
	f.Add("GET", "/kv/user1/a", "", "reader", "critical")
	f.Add("PUT", "/kv/user1/a", `{"value":"x"}`, "writer", "default")
	f.Add("GET", "/scan/user1?limit=999999999999", "", "scanner", "sheddable")
	f.Add("POST", "/bulk/user1", `{"items":[{"sk":"a","value":"b"}]}`, "", "bogus")
	f.Add("POST", "/bulk/%zz", `{"items":`, "x", "")
	f.Add("GET", "/kv//", "", "\x00", "critical")
	shards := newTestShards(f, 3, capacity{})
	_, h := newTestDispatcher(f, defaultDispatcherConfig(), shards)
	f.Fuzz(func(t *testing.T, method, path, body, caller, tier string) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req, err := http.NewRequest(method, "http://kv"+path, strings.NewReader(body))
		if err != nil {
			return // not a request a client could send
		}
		req.Header.Set("X-Caller", caller)
		req.Header.Set("X-Criticality", tier)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code == http.StatusInternalServerError {
			t.Fatalf("%s %s %q: 500 %s", method, path, body, rec.Body)
		}
	})
}
