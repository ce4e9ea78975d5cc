package server

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/chaosrun/chaosrun/targets/platform"
)

// bulkheadResize is the JSON body of PUT /admin/bulkheads/{name}.
type bulkheadResize struct {
	// Limit is the new limit; 0 keeps it when Mode is set.
	Limit int `json:"limit"`
	// Reservations replaces a soft bulkhead's per-key reservations (optional).
	Reservations map[string]int `json:"reservations,omitempty"`
	// Mode switches the mode (optional): hard, shadow or off. A bulkhead
	// watched in shadow mode starts enforcing with "hard".
	Mode string `json:"mode,omitempty"`
}

// bulkheadInfo is one bulkhead in GET /admin/bulkheads.
type bulkheadInfo struct {
	Name         string         `json:"name"`
	Limit        int            `json:"limit"`
	Inflight     int            `json:"inflight"`
	Mode         string         `json:"mode"`
	Reservations map[string]int `json:"reservations,omitempty"`
}

// registerAdmin adds the admin endpoints (not behind the worker pool):
// GET|PUT /admin/quotas, GET /admin/bulkheads, PUT /admin/bulkheads/{name}.
func (s *Server) registerAdmin() {
	s.mux.Handle("GET /admin/quotas", s.adminOnly(http.HandlerFunc(s.getQuotas)))
	s.mux.Handle("PUT /admin/quotas", s.adminOnly(http.HandlerFunc(s.putQuotas)))
	s.mux.Handle("GET /admin/bulkheads", s.adminOnly(http.HandlerFunc(s.getBulkheads)))
	s.mux.Handle("PUT /admin/bulkheads/{name}", s.adminOnly(http.HandlerFunc(s.putBulkhead)))
}

// adminOnly requires "Authorization: Bearer TOKEN" when an admin token is set.
func (s *Server) adminOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.AdminToken != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.AdminToken)) != 1 {
				platform.WriteError(w, http.StatusUnauthorized, "unauthorized",
					fmt.Sprintf("%s: %s needs header Authorization: Bearer <admin token>", s.name, r.URL.Path))
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Server) getQuotas(w http.ResponseWriter, _ *http.Request) {
	platform.WriteJSON(w, http.StatusOK, s.quotas.config())
}

func (s *Server) putQuotas(w http.ResponseWriter, r *http.Request) {
	var cfg QuotaConfig
	if err := platform.DecodeJSON(w, r, &cfg); err != nil {
		platform.WriteError(w, http.StatusBadRequest, "bad-request",
			fmt.Sprintf(`%s: PUT /admin/quotas: %v; want {"default": RATE, "callers": {"NAME": RATE}}`, s.name, err))
		return
	}
	if err := s.quotas.setConfig(cfg); err != nil {
		platform.WriteError(w, http.StatusBadRequest, "bad-request", fmt.Sprintf("%s: PUT /admin/quotas: %v", s.name, err))
		return
	}
	s.log.Info("quotas changed", "target", s.name, "default", cfg.Default, "callers", QuotaFlag(cfg.Callers).String())
	platform.WriteJSON(w, http.StatusOK, s.quotas.config())
}

func (s *Server) bulkheadInfo(b resizable) bulkheadInfo {
	info := bulkheadInfo{Name: b.Name(), Limit: b.Limit()}
	switch v := b.(type) {
	case *Bulkhead:
		info.Inflight, info.Mode = v.inUse(), v.bulkMode().String()
	case *softBulkhead:
		info.Inflight, info.Mode, info.Reservations = v.inUse(), "soft-"+v.bulkMode().String(), v.reservations()
	}
	return info
}

func (s *Server) getBulkheads(w http.ResponseWriter, _ *http.Request) {
	set := &s.metrics.server.bulkheads
	out := []bulkheadInfo{}
	for _, n := range set.names() {
		if b, ok := set.get(n); ok {
			out = append(out, s.bulkheadInfo(b))
		}
	}
	platform.WriteJSON(w, http.StatusOK, out)
}

func (s *Server) putBulkhead(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	set := &s.metrics.server.bulkheads
	b, ok := set.get(name)
	if !ok {
		platform.WriteError(w, http.StatusNotFound, "not-found",
			fmt.Sprintf("%s: no bulkhead %q; known: %s", s.name, name, strings.Join(set.names(), ", ")))
		return
	}
	var in bulkheadResize
	if err := platform.DecodeJSON(w, r, &in); err != nil {
		platform.WriteError(w, http.StatusBadRequest, "bad-request", fmt.Sprintf(`%s: PUT /admin/bulkheads/%s: %v; want {"limit": N}`, s.name, name, err))
		return
	}
	if err := resizeBulkhead(b, in); err != nil {
		platform.WriteError(w, http.StatusBadRequest, "bad-request", fmt.Sprintf("%s: PUT /admin/bulkheads/%s: %v", s.name, name, err))
		return
	}
	s.log.Info("bulkhead resized", "target", s.name, "bulkhead", name, "limit", b.Limit(), "mode", in.Mode)
	platform.WriteJSON(w, http.StatusOK, s.bulkheadInfo(b))
}

// resizeBulkhead applies a PUT /admin/bulkheads/{name} body to b: the mode
// first, then the limit (0 with a mode: unchanged) and reservations.
func resizeBulkhead(b resizable, in bulkheadResize) error {
	if in.Mode != "" {
		m, err := ParseBulkheadMode(in.Mode)
		if err != nil {
			return err
		}
		b.setMode(m)
		if in.Limit == 0 && in.Reservations == nil {
			return nil
		}
	}
	switch v := b.(type) {
	case *softBulkhead:
		return v.resize(in.Limit, in.Reservations)
	default:
		if in.Reservations != nil {
			return fmt.Errorf("bulkhead %s is not soft: it has no reservations", b.Name())
		}
		return b.setLimit(in.Limit)
	}
}
