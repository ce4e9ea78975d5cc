package platform

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// ReadyPrefix starts the one line a server prints to stdout once it listens.
const ReadyPrefix = "listening on http://"

// ShutdownGrace is how long in-flight requests get to finish after ctx ends; then
// their contexts are cancelled and connections closed, all within 2 s.
const ShutdownGrace = 1500 * time.Millisecond

// ServerConfig says where a Server listens and how big its worker pool is.
type ServerConfig struct {
	Listen       string
	Workers      int
	QueueTimeout time.Duration
}

// Server owns the listener, the ready line, /healthz, /metrics, graceful shutdown
// and the server-wide worker limit that every route added with Handle goes through.
type Server struct {
	name    string
	cfg     ServerConfig
	log     *slog.Logger
	metrics *Metrics
	workers *WorkerLimit
	mux     *http.ServeMux
	ready   atomic.Bool
}

// NewServer returns a server named name (for logs). log may be nil (discard).
func NewServer(name string, cfg ServerConfig, m *Metrics, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if m == nil {
		m = NewMetrics()
	}
	s := &Server{
		name: name, cfg: cfg, log: log, metrics: m,
		workers: NewWorkerLimit(cfg.Workers, cfg.QueueTimeout),
		mux:     http.NewServeMux(),
	}
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.Handle("GET /metrics", m.Handler())
	return s
}

// Metrics returns the server's metrics (and registry).
func (s *Server) Metrics() *Metrics { return s.metrics }

// Workers returns the server-wide worker limit.
func (s *Server) Workers() *WorkerLimit { return s.workers }

// Handle routes pattern (http.ServeMux syntax) to h through the worker limit.
func (s *Server) Handle(pattern string, h http.Handler) {
	s.mux.Handle(pattern, s.limited(pattern, h))
}

// HandleFunc is Handle for a function.
func (s *Server) HandleFunc(pattern string, h http.HandlerFunc) { s.Handle(pattern, h) }

// Handler is the server's whole routing, for tests with httptest. It counts as ready.
func (s *Server) Handler() http.Handler {
	s.ready.Store(true)
	return s.mux
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	if !s.ready.Load() {
		http.Error(w, "starting", http.StatusServiceUnavailable)
		return
	}
	_, _ = io.WriteString(w, "ok")
}

// limited makes h wait for a worker, holding it while h runs.
func (s *Server) limited(route string, h http.Handler) http.Handler {
	m := s.metrics
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		defer func() {
			m.Requests.WithLabelValues(route, strconv.Itoa(rec.code)).Inc()
			m.RequestDuration.WithLabelValues(route).Observe(time.Since(start).Seconds())
		}()
		release, waited, err := s.workers.Acquire(r.Context())
		m.QueueWait.Observe(waited.Seconds())
		switch {
		case errors.Is(err, ErrQueueTimeout):
			m.Rejected.WithLabelValues(ReasonQueueTimeout).Inc()
			WriteError(rec, http.StatusServiceUnavailable, ReasonQueueTimeout,
				fmt.Sprintf("%s: all %d workers busy for %s", s.name, s.workers.Size(), s.cfg.QueueTimeout))
			return
		case err != nil: // the caller went away while queued; nobody reads an answer
			m.Rejected.WithLabelValues("canceled").Inc()
			rec.code = 499
			return
		}
		defer release()
		m.Inflight.Inc()
		defer m.Inflight.Dec()
		h.ServeHTTP(rec, r)
	})
}

// Run listens on the configured address and serves until ctx ends; see Serve.
func (s *Server) Run(ctx context.Context, stdout io.Writer) error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("%s: listen on %q: %w", s.name, s.cfg.Listen, err)
	}
	return s.Serve(ctx, ln, stdout)
}

// Serve prints "listening on http://HOST:PORT" to stdout, serves ln until ctx ends,
// then shuts down gracefully within ShutdownGrace and returns nil.
func (s *Server) Serve(ctx context.Context, ln net.Listener, stdout io.Writer) error {
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	srv := &http.Server{
		Handler:           s.mux,
		BaseContext:       func(net.Listener) context.Context { return base },
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       60 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	s.ready.Store(true)
	if _, err := fmt.Fprintf(stdout, "%s%s\n", ReadyPrefix, ln.Addr()); err != nil {
		_ = srv.Close()
		<-errc
		return fmt.Errorf("%s: write ready line: %w", s.name, err)
	}
	s.log.Info("serving", "target", s.name, "addr", ln.Addr().String(),
		"workers", s.workers.Size(), "queue_timeout", s.cfg.QueueTimeout)

	select {
	case err := <-errc:
		return fmt.Errorf("%s: serve %s: %w", s.name, ln.Addr(), err)
	case <-ctx.Done():
	}
	s.ready.Store(false)
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		s.log.Warn("graceful shutdown cut short; closing connections", "target", s.name, "err", err)
		cancelBase()
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s: serve %s: %w", s.name, ln.Addr(), err)
	}
	s.log.Info("stopped", "target", s.name)
	return nil
}

// statusRecorder remembers the status code a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.code, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// ParseReadyLine returns the base URL (http://HOST:PORT) from a ready line.
func ParseReadyLine(line string) (baseURL string, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), ReadyPrefix)
	if !ok || rest == "" {
		return "", false
	}
	return "http://" + rest, true
}
