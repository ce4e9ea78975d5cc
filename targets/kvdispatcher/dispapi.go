package kvdispatcher

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
	"github.com/chaosrun/chaosrun/targets/platform/client"
	"github.com/chaosrun/chaosrun/targets/platform/server"
)

// Response headers a workload can count by.
const (
	// headerServedBy says where a read's value came from: backend (this
	// request read the shard), cache (the hot-key cache) or coalesced
	// (another request's backend read, shared).
	headerServedBy = "X-Served-By"
	// headerShard is the shard the key lives on.
	headerShard = "X-Shard"
)

// Served-by values.
const (
	servedBackend   = "backend"
	servedCache     = "cache"
	servedCoalesced = "coalesced"
)

// Register adds the dispatcher's routes to srv.
func (d *dispatcher) Register(srv *server.Server) {
	srv.HandleFunc("GET /kv/{pk}/{sk}", d.get)
	srv.HandleFunc("PUT /kv/{pk}/{sk}", d.put)
	srv.HandleFunc("GET /scan/{pk}", d.scan)
	srv.HandleFunc("POST /bulk/{pk}", d.bulk)
}

// who reads the caller and tier of r; a bad tier is answered with 400.
func (d *dispatcher) who(w http.ResponseWriter, r *http.Request) (string, criticality, bool) {
	tier, err := parseTier(r.Header.Get(platform.HeaderCriticality))
	if err != nil {
		platform.WriteError(w, http.StatusBadRequest, "bad-request", "kvdispatcher: "+err.Error())
		return "", 0, false
	}
	return d.caller(r.Header.Get(platform.HeaderCaller)), tier, true
}

// shedQuota answers 429: the caller's bucket is empty.
func (d *dispatcher) shedQuota(w http.ResponseWriter, p price) {
	reason := platform.ReasonQuota
	d.m.shed.WithLabelValues(p.Tier.String(), reason).Inc()
	unit := "request units"
	if !d.cfg.RU {
		unit = "requests"
	}
	msg := fmt.Sprintf("kvdispatcher: caller %q is over its quota of %v %s/s", p.Caller, d.cfg.Quota, unit)
	if p.Mult > 1 {
		msg += fmt.Sprintf(" (tier %s pays %v× while the latency ratio is low)", p.Tier, p.Mult)
	}
	platform.WriteError(w, http.StatusTooManyRequests, reason, msg)
}

// fail answers a failed shard call.
func (d *dispatcher) fail(w http.ResponseWriter, tier criticality, shard int, err error) {
	var de *client.DepError
	switch {
	case client.KindOf(err) == client.KindBreaker:
		d.m.shed.WithLabelValues(tier.String(), platform.ReasonBreaker).Inc()
		platform.WriteError(w, http.StatusServiceUnavailable, platform.ReasonBreaker,
			fmt.Sprintf("kvdispatcher: shard %d: %v", shard, err))
	case client.KindOf(err) == client.KindCanceled:
		w.WriteHeader(499) // the caller left; nobody reads this
	case client.IsTimeout(err) || client.KindOf(err) == client.KindDeadline:
		platform.WriteError(w, http.StatusGatewayTimeout, platform.ReasonDependencyTimeout, "kvdispatcher: "+err.Error())
	case errors.As(err, &de) && de.Kind == client.KindStatus && de.Status == http.StatusTooManyRequests:
		w.Header().Set(platform.RejectHeader, reasonThrottled)
		platform.WriteError(w, http.StatusTooManyRequests, reasonThrottled, "kvdispatcher: "+err.Error())
	case errors.As(err, &de) && de.Kind == client.KindStatus && de.Status < 500:
		platform.WriteError(w, de.Status, de.Body.Reason, "kvdispatcher: "+err.Error())
	default:
		platform.WriteError(w, http.StatusBadGateway, platform.ReasonDependencyError, "kvdispatcher: "+err.Error())
	}
}

func (d *dispatcher) get(w http.ResponseWriter, r *http.Request) {
	start := d.now()
	caller, tier, ok := d.who(w, r)
	if !ok {
		return
	}
	pk, sk := r.PathValue("pk"), r.PathValue("sk")
	p, ok := d.Admit(caller, tier, d.cfg.Weights.ReadBase(), start)
	if !ok {
		d.shedQuota(w, p)
		return
	}
	shard := shardOf(pk, len(d.shards))
	w.Header().Set(headerShard, strconv.Itoa(shard))
	key := pk + "/" + sk
	hot := d.cfg.HotKeys && d.hot.Observe(key, start)
	var (
		ans    getAnswer
		err    error
		served = servedBackend
	)
	switch {
	case !hot:
		d.m.backendReads.WithLabelValues(strconv.Itoa(shard), "other").Inc()
		err = d.call(r.Context(), shard, true, http.MethodGet, "/kv/"+key, nil, &ans)
	default:
		if v, hit := d.cache.Get(key); hit {
			d.m.cacheHits.Inc()
			ans, served = getAnswer{Key: key, Value: v}, servedCache
			break
		}
		d.m.cacheMisses.Inc()
		ans, served, err = d.coalescedGet(r.Context(), shard, key)
	}
	if err != nil {
		d.fail(w, tier, shard, err)
		return
	}
	latency := time.Duration(0)
	if served != servedCache {
		latency = d.now().Sub(start)
	}
	d.Charge(p, d.cfg.Weights.ReadAfter(len(ans.Value), latency), d.now())
	w.Header().Set(headerServedBy, served)
	platform.WriteJSON(w, http.StatusOK, ans)
}

// coalescedGet reads a hot key once for every concurrent miss of it. The
// read runs detached from any one caller: a waiter that leaves does not
// cancel it for the others.
func (d *dispatcher) coalescedGet(ctx context.Context, shard int, key string) (getAnswer, string, error) {
	led := false
	ch := d.sf.DoChan(key, func() (any, error) {
		led = true
		d.m.backendReads.WithLabelValues(strconv.Itoa(shard), "hot").Inc()
		d.countHotRead(key)
		// Not the leader's context: neither its cancellation nor its
		// deadline (X-Deadline-Ms, carried in its values) binds the others.
		cctx, cancel := context.WithTimeout(context.Background(), d.timeout)
		defer cancel()
		var ans getAnswer
		err := d.call(cctx, shard, true, http.MethodGet, "/kv/"+key, nil, &ans)
		if err == nil {
			d.cache.Add(key, ans.Value)
		}
		return ans, err
	})
	select {
	case res := <-ch:
		served := servedBackend
		if !led {
			served = servedCoalesced
			d.m.coalesced.Inc()
		}
		ans, _ := res.Val.(getAnswer)
		return ans, served, res.Err
	case <-ctx.Done():
		return getAnswer{}, "", &client.DepError{Dep: "kvstore", Method: http.MethodGet, URL: "/kv/" + key, Kind: client.KindCanceled, Err: ctx.Err()}
	}
}

// countHotRead counts a backend read of a hot key under the key's own label,
// for the first maxHotLabels keys.
func (d *dispatcher) countHotRead(key string) {
	key = strings.ToValidUTF8(key, "\uFFFD") // a label must be valid UTF-8
	d.hotMu.Lock()
	_, ok := d.hotLabels[key]
	if !ok && len(d.hotLabels) < maxHotLabels {
		d.hotLabels[key], ok = struct{}{}, true
	}
	d.hotMu.Unlock()
	if ok {
		d.m.hotReads.WithLabelValues(key).Inc()
	}
}

func (d *dispatcher) scan(w http.ResponseWriter, r *http.Request) {
	start := d.now()
	caller, tier, ok := d.who(w, r)
	if !ok {
		return
	}
	limit, err := scanLimit(r)
	if err != nil {
		platform.WriteError(w, http.StatusBadRequest, "bad-request", "kvdispatcher: "+err.Error())
		return
	}
	p, ok := d.Admit(caller, tier, d.cfg.Weights.ReadBase(), start)
	if !ok {
		d.shedQuota(w, p)
		return
	}
	pk := r.PathValue("pk")
	shard := shardOf(pk, len(d.shards))
	w.Header().Set(headerShard, strconv.Itoa(shard))
	d.m.backendReads.WithLabelValues(strconv.Itoa(shard), "scan").Inc()
	path := "/scan/" + pk + "?limit=" + strconv.Itoa(limit)
	if from := r.URL.Query().Get("from"); from != "" {
		path += "&from=" + from
	}
	var ans scanAnswer
	if err := d.call(r.Context(), shard, false, http.MethodGet, path, nil, &ans); err != nil {
		d.fail(w, tier, shard, err)
		return
	}
	d.Charge(p, d.cfg.Weights.ReadAfter(ans.Bytes, d.now().Sub(start)), d.now())
	w.Header().Set(headerServedBy, servedBackend)
	platform.WriteJSON(w, http.StatusOK, ans)
}

func (d *dispatcher) put(w http.ResponseWriter, r *http.Request) {
	var req putRequest
	if err := platform.DecodeJSON(w, r, &req); err != nil {
		platform.WriteError(w, http.StatusBadRequest, "bad-request", "kvdispatcher: "+err.Error())
		return
	}
	pk, sk := r.PathValue("pk"), r.PathValue("sk")
	d.write(w, r, pk, http.MethodPut, "/kv/"+pk+"/"+sk, req, len(req.Value), []string{pk + "/" + sk})
}

func (d *dispatcher) bulk(w http.ResponseWriter, r *http.Request) {
	var req bulkRequest
	if err := platform.DecodeJSON(w, r, &req); err != nil {
		platform.WriteError(w, http.StatusBadRequest, "bad-request", "kvdispatcher: "+err.Error())
		return
	}
	pk := r.PathValue("pk")
	n := 0
	keys := make([]string, 0, len(req.Items))
	for _, it := range req.Items {
		n += len(it.Value)
		keys = append(keys, pk+"/"+it.Key)
	}
	d.write(w, r, pk, http.MethodPost, "/bulk/"+pk, req, n, keys)
}

// write prices, admits and forwards a write of n bytes, then drops the
// written keys from the hot-key cache.
func (d *dispatcher) write(w http.ResponseWriter, r *http.Request, pk, method, path string, body any, n int, keys []string) {
	start := d.now()
	caller, tier, ok := d.who(w, r)
	if !ok {
		return
	}
	p, ok := d.Admit(caller, tier, d.cfg.Weights.WriteBase(n), start)
	if !ok {
		d.shedQuota(w, p)
		return
	}
	shard := shardOf(pk, len(d.shards))
	w.Header().Set(headerShard, strconv.Itoa(shard))
	raw, err := jsonBody(body)
	if err != nil {
		platform.WriteError(w, http.StatusInternalServerError, "internal", "kvdispatcher: "+err.Error())
		return
	}
	var ans writeAnswer
	err = d.call(r.Context(), shard, false, method, path, raw, &ans)
	for _, k := range keys {
		d.cache.Remove(k)
	}
	if err != nil {
		d.fail(w, tier, shard, err)
		return
	}
	d.Charge(p, d.cfg.Weights.WriteAfter(d.now().Sub(start)), d.now())
	platform.WriteJSON(w, http.StatusOK, ans)
}
