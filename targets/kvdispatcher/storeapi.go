package kvdispatcher

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
	"github.com/chaosrun/chaosrun/targets/platform/server"
	"github.com/prometheus/client_golang/prometheus"
)

// reasonThrottled is the reject reason of a shard over its capacity (429).
const reasonThrottled = "throttled"

// Wire types shared by the shard and the dispatcher APIs.
type (
	// getAnswer is the answer to GET /kv/{pk}/{sk}.
	getAnswer struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	}
	// scanAnswer is the answer to GET /scan/{pk}?from=SK&limit=N.
	scanAnswer struct {
		Items []item `json:"items"`
		Bytes int    `json:"bytes"`
	}
	// putRequest is the body of PUT /kv/{pk}/{sk}.
	putRequest struct {
		Value string `json:"value"`
	}
	// bulkRequest is the body of POST /bulk/{pk}.
	bulkRequest struct {
		Items []item `json:"items"`
	}
	// writeAnswer is the answer to a write.
	writeAnswer struct {
		Written int `json:"written"`
		Bytes   int `json:"bytes"`
	}
)

// maxScan is the most rows one scan returns.
const maxScan = 1000

// storeAPI serves one shard over HTTP.
type storeAPI struct {
	Store    *store
	Throttle *throttle
	Now      func() time.Time
	// ServiceTime is simulated work per admitted read (holding a worker).
	ServiceTime time.Duration

	throttled *prometheus.CounterVec
	bytesRead prometheus.Counter
}

// Register adds the shard's routes and series to srv.
func (a *storeAPI) Register(srv *server.Server) {
	if a.Now == nil {
		a.Now = time.Now
	}
	a.throttled = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kvstore_throttled_total", Help: "Requests refused over the shard's capacity, by budget spent.",
	}, []string{"budget"})
	a.bytesRead = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kvstore_bytes_read_total", Help: "Value bytes read by gets and scans.",
	})
	srv.Metrics().Registry().MustRegister(a.throttled, a.bytesRead)
	srv.HandleFunc("GET /kv/{pk}/{sk}", a.get)
	srv.HandleFunc("PUT /kv/{pk}/{sk}", a.put)
	srv.HandleFunc("GET /scan/{pk}", a.scan)
	srv.HandleFunc("POST /bulk/{pk}", a.bulk)
}

func (a *storeAPI) throttle(w http.ResponseWriter, budget string) {
	a.throttled.WithLabelValues(budget).Inc()
	w.Header().Set(platform.RejectHeader, reasonThrottled)
	platform.WriteError(w, http.StatusTooManyRequests, reasonThrottled,
		fmt.Sprintf("kvstore: shard over its %s capacity", budget))
}

func (a *storeAPI) get(w http.ResponseWriter, r *http.Request) {
	if ok, budget := a.Throttle.AdmitRead(a.Now()); !ok {
		a.throttle(w, budget)
		return
	}
	a.work()
	pk, sk := r.PathValue("pk"), r.PathValue("sk")
	v, ok := a.Store.Get(pk, sk)
	if !ok {
		platform.WriteError(w, http.StatusNotFound, "not-found", fmt.Sprintf("kvstore: no key %s/%s", pk, sk))
		return
	}
	a.Throttle.ChargeBytes(a.Now(), len(v))
	a.bytesRead.Add(float64(len(v)))
	platform.WriteJSON(w, http.StatusOK, getAnswer{Key: pk + "/" + sk, Value: v})
}

func (a *storeAPI) scan(w http.ResponseWriter, r *http.Request) {
	limit, err := scanLimit(r)
	if err != nil {
		platform.WriteError(w, http.StatusBadRequest, "bad-request", "kvstore: "+err.Error())
		return
	}
	if ok, budget := a.Throttle.AdmitRead(a.Now()); !ok {
		a.throttle(w, budget)
		return
	}
	a.work()
	items, n := a.Store.Scan(r.PathValue("pk"), r.URL.Query().Get("from"), limit)
	a.Throttle.ChargeBytes(a.Now(), n)
	a.bytesRead.Add(float64(n))
	if items == nil {
		items = []item{}
	}
	platform.WriteJSON(w, http.StatusOK, scanAnswer{Items: items, Bytes: n})
}

func (a *storeAPI) work() {
	if a.ServiceTime > 0 {
		time.Sleep(a.ServiceTime)
	}
}

// scanLimit reads ?limit= (default 100, 1..MaxScan).
func scanLimit(r *http.Request) (int, error) {
	s := r.URL.Query().Get("limit")
	if s == "" {
		return 100, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxScan {
		return 0, fmt.Errorf("limit %q: want a whole number in 1..%d", s, maxScan)
	}
	return n, nil
}

func (a *storeAPI) put(w http.ResponseWriter, r *http.Request) {
	var req putRequest
	if err := platform.DecodeJSON(w, r, &req); err != nil {
		platform.WriteError(w, http.StatusBadRequest, "bad-request", "kvstore: "+err.Error())
		return
	}
	if ok, budget := a.Throttle.AdmitWrite(a.Now(), len(req.Value)); !ok {
		a.throttle(w, budget)
		return
	}
	a.Store.Put(r.PathValue("pk"), item{Key: r.PathValue("sk"), Value: req.Value})
	platform.WriteJSON(w, http.StatusOK, writeAnswer{Written: 1, Bytes: len(req.Value)})
}

func (a *storeAPI) bulk(w http.ResponseWriter, r *http.Request) {
	var req bulkRequest
	if err := platform.DecodeJSON(w, r, &req); err != nil {
		platform.WriteError(w, http.StatusBadRequest, "bad-request", "kvstore: "+err.Error())
		return
	}
	n := 0
	for i, it := range req.Items {
		if it.Key == "" {
			platform.WriteError(w, http.StatusBadRequest, "bad-request", fmt.Sprintf("kvstore: items[%d]: empty key", i))
			return
		}
		n += len(it.Value)
	}
	if ok, budget := a.Throttle.AdmitWrite(a.Now(), n); !ok {
		a.throttle(w, budget)
		return
	}
	a.Store.Put(r.PathValue("pk"), req.Items...)
	platform.WriteJSON(w, http.StatusOK, writeAnswer{Written: len(req.Items), Bytes: n})
}
