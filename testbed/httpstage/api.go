package httpstage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// maxAPIBody bounds the JSON bodies the API reads.
const maxAPIBody = 1 << 20

// API is Toxiproxy's REST API with HTTP stages added: every proxy created
// through POST /proxies gets a stage between it and its upstream (the proxy
// forwards to the stage, the stage to the upstream), and toxics of type
// http_error and http_latency are added to, shown from and removed from that
// stage under the usual /proxies/{proxy}/toxics routes. Everything else goes
// to Toxiproxy's own handler.
type API struct {
	inner  http.Handler
	seed   int64
	listen string
	mux    *http.ServeMux

	mu     sync.Mutex
	stages map[string]*Stage
}

// NewAPI wraps Toxiproxy's handler. Stages listen on listenHost with a
// kernel-picked port; seed seeds them (0: random).
func NewAPI(inner http.Handler, listenHost string, seed int64) *API {
	a := &API{inner: inner, seed: seed, listen: listenHost, mux: http.NewServeMux(), stages: map[string]*Stage{}}
	a.mux.Handle("/", inner)
	a.mux.HandleFunc("POST /proxies", a.createProxy)
	a.mux.HandleFunc("POST /proxies/{proxy}", a.updateProxy)
	a.mux.HandleFunc("PATCH /proxies/{proxy}", a.updateProxy)
	a.mux.HandleFunc("DELETE /proxies/{proxy}", a.deleteProxy)
	a.mux.HandleFunc("POST /reset", a.reset)
	a.mux.HandleFunc("GET /proxies/{proxy}/http", a.showStage)
	a.mux.HandleFunc("GET /proxies/{proxy}/toxics", a.listToxics)
	a.mux.HandleFunc("POST /proxies/{proxy}/toxics", a.addToxic)
	a.mux.HandleFunc("GET /proxies/{proxy}/toxics/{toxic}", a.toxic)
	a.mux.HandleFunc("DELETE /proxies/{proxy}/toxics/{toxic}", a.toxic)
	a.mux.HandleFunc("POST /proxies/{proxy}/toxics/{toxic}", a.toxic)
	a.mux.HandleFunc("PATCH /proxies/{proxy}/toxics/{toxic}", a.toxic)
	return a
}

func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

// Stage returns the stage of a proxy.
func (a *API) Stage(proxy string) (*Stage, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.stages[proxy]
	return s, ok
}

// Close closes every stage.
func (a *API) Close() error {
	a.mu.Lock()
	stages := a.stages
	a.stages = map[string]*Stage{}
	a.mu.Unlock()
	var errs []error
	for _, s := range stages {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

// apiError answers in Toxiproxy's error shape.
func apiError(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, map[string]any{"error": fmt.Sprintf(format, args...), "status": status})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// recorder keeps an inner handler's answer so it can be amended.
type recorder struct {
	hdr    http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.hdr }
func (r *recorder) WriteHeader(s int)           { r.status = s }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }

// call runs the inner handler with body and returns its answer.
func (a *API) call(r *http.Request, body []byte) *recorder {
	rec := &recorder{hdr: http.Header{}, status: http.StatusOK}
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	a.inner.ServeHTTP(rec, r2)
	return rec
}

func (rec *recorder) send(w http.ResponseWriter, body []byte) {
	for k, v := range rec.hdr {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(rec.status)
	w.Write(body)
}

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxAPIBody+1))
	if err != nil || len(b) > maxAPIBody {
		apiError(w, http.StatusBadRequest, "unreadable request body (at most %d bytes): %v", maxAPIBody, err)
		return nil, false
	}
	return b, true
}

// createProxy starts a stage for the new proxy and makes the proxy forward
// to it; the answer shows the upstream as asked.
func (a *API) createProxy(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var p map[string]any
	if err := json.Unmarshal(body, &p); err != nil {
		apiError(w, http.StatusBadRequest, "proxy: bad JSON: %v", err)
		return
	}
	name, _ := p["name"].(string)
	upstream, _ := p["upstream"].(string)
	if name == "" || upstream == "" {
		a.call(r, body).send(w, nil) // Toxiproxy says what is missing
		return
	}
	a.mu.Lock()
	_, dup := a.stages[name]
	a.mu.Unlock()
	if dup {
		apiError(w, http.StatusConflict, "proxy already exists")
		return
	}
	st, err := New(name, a.listen+":0", upstream, a.seed)
	if err != nil {
		apiError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	p["upstream"] = st.Addr()
	body, _ = json.Marshal(p)
	rec := a.call(r, body)
	if rec.status != http.StatusCreated {
		st.Close()
		rec.send(w, rec.body.Bytes())
		return
	}
	a.mu.Lock()
	a.stages[name] = st
	a.mu.Unlock()
	rec.send(w, withUpstream(rec.body.Bytes(), upstream))
}

// withUpstream rewrites the "upstream" of a proxy's JSON.
func withUpstream(b []byte, upstream string) []byte {
	var p map[string]any
	if json.Unmarshal(b, &p) != nil {
		return b
	}
	p["upstream"] = upstream
	out, err := json.Marshal(p)
	if err != nil {
		return b
	}
	return out
}

// updateProxy sends a new upstream to the stage; the proxy keeps
// forwarding to the stage.
func (a *API) updateProxy(w http.ResponseWriter, r *http.Request) {
	st, ok := a.Stage(r.PathValue("proxy"))
	if !ok {
		a.inner.ServeHTTP(w, r)
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var p map[string]any
	if err := json.Unmarshal(body, &p); err != nil {
		apiError(w, http.StatusBadRequest, "proxy: bad JSON: %v", err)
		return
	}
	upstream, _ := p["upstream"].(string)
	if upstream != "" {
		p["upstream"] = st.Addr()
		body, _ = json.Marshal(p)
	}
	rec := a.call(r, body)
	if rec.status/100 == 2 && upstream != "" {
		st.SetUpstream(upstream)
	}
	rec.send(w, withUpstream(rec.body.Bytes(), st.Upstream()))
}

func (a *API) deleteProxy(w http.ResponseWriter, r *http.Request) {
	rec := a.call(r, nil)
	if rec.status/100 == 2 {
		a.mu.Lock()
		st := a.stages[r.PathValue("proxy")]
		delete(a.stages, r.PathValue("proxy"))
		a.mu.Unlock()
		if st != nil {
			st.Close()
		}
	}
	rec.send(w, rec.body.Bytes())
}

func (a *API) reset(w http.ResponseWriter, r *http.Request) {
	rec := a.call(r, nil)
	if rec.status/100 == 2 {
		a.mu.Lock()
		for _, st := range a.stages {
			st.Reset()
		}
		a.mu.Unlock()
	}
	rec.send(w, rec.body.Bytes())
}

// showStage answers where a proxy's stage listens and what it counted.
func (a *API) showStage(w http.ResponseWriter, r *http.Request) {
	st, ok := a.Stage(r.PathValue("proxy"))
	if !ok {
		apiError(w, http.StatusNotFound, "proxy %s has no HTTP stage", r.PathValue("proxy"))
		return
	}
	req, tun := st.Counts()
	writeJSON(w, http.StatusOK, map[string]any{"listen": st.Addr(), "upstream": st.Upstream(),
		"requests": req, "tunnels": tun, "toxics": st.List()})
}

// listToxics appends the stage's toxics to Toxiproxy's list.
func (a *API) listToxics(w http.ResponseWriter, r *http.Request) {
	rec := a.call(r, nil)
	st, ok := a.Stage(r.PathValue("proxy"))
	if !ok || rec.status != http.StatusOK {
		rec.send(w, rec.body.Bytes())
		return
	}
	var list []json.RawMessage
	if json.Unmarshal(rec.body.Bytes(), &list) != nil {
		rec.send(w, rec.body.Bytes())
		return
	}
	for _, t := range st.List() {
		b, _ := json.Marshal(t)
		list = append(list, b)
	}
	out, _ := json.Marshal(list)
	rec.send(w, out)
}

// isHTTPKind reports whether a toxic type belongs to the stage.
func isHTTPKind(t string) bool { return slices.Contains(Kinds, t) }

func (a *API) addToxic(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var peek struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(body, &peek)
	if !isHTTPKind(peek.Type) {
		rec := a.call(r, body)
		rec.send(w, rec.body.Bytes())
		return
	}
	proxy := r.PathValue("proxy")
	st, ok := a.Stage(proxy)
	if !ok {
		apiError(w, http.StatusNotFound, "proxy %s has no HTTP stage for a %s toxic (start the server with --http-stage and create the proxy through this API)", proxy, peek.Type)
		return
	}
	var t Toxic
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		apiError(w, http.StatusBadRequest, "%s toxic: %v", peek.Type, err)
		return
	}
	if t.Name == "" {
		t.Name = t.Type + "_" + strings.ToLower(t.Stream)
	}
	if toxiproxyHas(a, r, proxy, t.Name) {
		apiError(w, http.StatusConflict, "toxic already exists")
		return
	}
	stored, err := st.Add(t)
	switch {
	case errors.Is(err, ErrExists):
		apiError(w, http.StatusConflict, "toxic already exists")
	case err != nil:
		apiError(w, http.StatusBadRequest, "%v", err)
	default:
		writeJSON(w, http.StatusOK, stored)
	}
}

// toxiproxyHas reports whether Toxiproxy itself has a toxic of that name
// on the proxy, so names stay unique across both.
func toxiproxyHas(a *API, r *http.Request, proxy, name string) bool {
	r2, err := http.NewRequestWithContext(r.Context(), http.MethodGet, "/proxies/"+url.PathEscape(proxy)+"/toxics/"+url.PathEscape(name), nil)
	if err != nil {
		return false
	}
	rec := &recorder{hdr: http.Header{}, status: http.StatusOK}
	a.inner.ServeHTTP(rec, r2)
	return rec.status == http.StatusOK
}

// toxic shows, removes or refuses to update a stage toxic; others go to
// Toxiproxy.
func (a *API) toxic(w http.ResponseWriter, r *http.Request) {
	st, ok := a.Stage(r.PathValue("proxy"))
	name := r.PathValue("toxic")
	if ok {
		_, ok = st.Get(name)
	}
	if !ok {
		a.inner.ServeHTTP(w, r)
		return
	}
	switch r.Method {
	case http.MethodGet:
		t, _ := st.Get(name)
		writeJSON(w, http.StatusOK, t)
	case http.MethodDelete:
		// Toxiproxy answers 204; this answers 200 with the final stats.
		t, err := st.Remove(name)
		if err != nil {
			apiError(w, http.StatusNotFound, "%v", err)
			return
		}
		writeJSON(w, http.StatusOK, t)
	default:
		apiError(w, http.StatusMethodNotAllowed, "%s toxics cannot be updated: remove and add again", strings.Join(Kinds, "/"))
	}
}
