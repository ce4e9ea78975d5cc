package main

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
)

// routes are the API's endpoints.
func routes(st *store) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /items", st.listItems)
	mux.HandleFunc("POST /items", st.createItem)
	mux.HandleFunc("GET /admin/consistency", st.consistency)
	return mux
}

// healthOnly is the worker's HTTP side: /healthz for its health check.
func healthOnly() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	return mux
}

// listItems answers the newest items from the database; when the database
// fails or is slower than DB_TIMEOUT, from the cached copy (X-Cache: stale),
// or 503 when there is none.
func (s *store) listItems(w http.ResponseWriter, r *http.Request) {
	items, err := s.latest(r.Context())
	if err == nil {
		writeJSON(w, http.StatusOK, items)
		return
	}
	b, cerr := s.cached(r.Context())
	if cerr != nil {
		log.Printf("GET /items: database: %v; cache: %v", err, cerr)
		http.Error(w, "database unavailable", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Cache", "stale")
	w.Write(b) //nolint:errcheck // the client went away
}

// createItem writes {"name": "..."} as a new item.
func (s *store) createItem(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name string `json:"name"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&in); err != nil || in.Name == "" {
		http.Error(w, `want {"name": "..."}`, http.StatusBadRequest)
		return
	}
	id, err := s.add(r.Context(), in.Name)
	if err != nil {
		log.Printf("POST /items: %v", err)
		http.Error(w, "database unavailable", http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": id, "name": in.Name})
}

// consistency reports whether every row this process acknowledged is
// still in the database.
func (s *store) consistency(w http.ResponseWriter, r *http.Request) {
	acked, present, err := s.missing(r.Context())
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "detail": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"ok":     acked > 0 && present == acked,
		"detail": fmt.Sprintf("%d of %d acknowledged rows present", present, acked),
		"values": map[string]float64{"acked": float64(acked), "present": float64(present)},
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v) //nolint:errcheck // the client went away
}
