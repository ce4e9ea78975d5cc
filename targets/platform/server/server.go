package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
)

// ReadyPrefix starts the one line a server prints to stdout once it listens.
const ReadyPrefix = "listening on http://"

// shutdownGrace is how long in-flight requests get to finish after ctx ends; then
// their contexts are cancelled and connections closed, all within 2 s.
const shutdownGrace = 1500 * time.Millisecond

// Config says where a Server listens, how big its worker pool is and
// which admission controls guard it. The zero value of each control is off
// (an unbounded FIFO queue, no deadlines, no quotas): Flags.Config
// fills in the flags' values.
type Config struct {
	Listen       string
	Workers      int
	QueueTimeout time.Duration

	// Queue is the queue discipline; QueueLength bounds it (0: unbounded).
	Queue       QueueMode
	QueueLength int
	// Codel are CoDel's target and interval (zero: DefaultCodel).
	Codel CodelParams
	// Backpressure answers 503 back-pressure while the CoDel queue is
	// overloaded, until fewer than Watermark requests wait (0: Workers).
	Backpressure bool
	Watermark    int
	// Deadlines enforces HeaderDeadline; off, it is only recorded (wasted work is counted).
	Deadlines bool
	// Quotas enforces per-caller rate quotas from Quota, counted in Redis at
	// QuotaRedis (host:port) when set, else locally.
	Quotas     bool
	Quota      QuotaConfig
	QuotaRedis string
	// AdminToken, when set, must come as "Authorization: Bearer TOKEN" on /admin/ calls.
	AdminToken string
	// Clock is the clock of the queue and quotas (nil: time.Now); tests inject one.
	Clock func() time.Time
}

// Server owns the listener, the ready line, /healthz, /metrics, graceful shutdown
// and the server-wide worker limit that every route added with Handle goes through.
type Server struct {
	name    string
	cfg     Config
	log     *slog.Logger
	metrics *Metrics
	workers *pool
	quotas  *quotas
	redis   *redisQuota // nil unless QuotaRedis
	dec     decisionCounters
	mux     *http.ServeMux
	ready   atomic.Bool

	// grpc serves the routes as gRPC methods on the same port (grpc.go).
	grpc       *grpc.Server
	grpcMu     sync.RWMutex
	grpcRoutes map[string]grpcRoute
}

// New returns a server named name (for logs). log may be nil (discard).
func New(name string, cfg Config, m *Metrics, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if m == nil {
		m = NewMetrics()
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Watermark <= 0 {
		cfg.Watermark = max(cfg.Workers, 1)
	}
	s := &Server{name: name, cfg: cfg, log: log, metrics: m, mux: http.NewServeMux(), grpcRoutes: map[string]grpcRoute{}}
	s.grpc = s.newGRPC()
	s.workers = newPool(poolConfig{
		Mode: cfg.Queue, Workers: cfg.Workers, MaxQueue: cfg.QueueLength, QueueTimeout: cfg.QueueTimeout,
		Codel: cfg.Codel, Backpressure: cfg.Backpressure, Watermark: cfg.Watermark,
	}, cfg.Clock)
	s.workers.obs = poolObserver(m.server)
	s.dec = newDecisionCounters(m.server)
	var counter quotaCounter = newLocalQuota(cfg.Clock)
	if cfg.QuotaRedis != "" {
		s.redis = newRedisQuota(cfg.QuotaRedis)
		counter = s.redis
	}
	q, err := newQuotas(cfg.Quota, counter)
	if err != nil { // Config.Validate catches this first; keep the server usable
		log.Error("quota config refused; no quotas", "target", name, "err", err)
		q, _ = newQuotas(QuotaConfig{}, counter)
	}
	s.quotas = q
	x := m.server
	x.QueueMode.WithLabelValues(cfg.Queue.String()).Set(1)
	x.QueueMode.WithLabelValues(otherMode(cfg.Queue).String()).Set(0)
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.Handle("GET /metrics", m.handler())
	s.registerAdmin()
	return s
}

// Metrics returns the server's metrics (and registry).
func (s *Server) Metrics() *Metrics { return s.metrics }

// Handle routes pattern (http.ServeMux syntax) to h through the admission
// path: deadline, quota, then the worker pool's queue.
func (s *Server) Handle(pattern string, h http.Handler) {
	s.HandleWith(pattern, h, RouteOptions{})
}

// RouteOptions are per-API admission controls.
type RouteOptions struct {
	// Bulkhead limits this API's requests queued or running (nil: none); a
	// request with HeaderCriticality sheddable is droppable.
	Bulkhead ConcurrencyLimit
}

// HandleWith is Handle with per-API options.
func (s *Server) HandleWith(pattern string, h http.Handler, opts RouteOptions) {
	s.mux.Handle(pattern, s.admit(pattern, h, opts))
	s.addGRPCRoute(pattern)
}

// HandleFunc is Handle for a function.
func (s *Server) HandleFunc(pattern string, h http.HandlerFunc) { s.Handle(pattern, h) }

// Handler is the server's whole routing, gRPC calls included, for tests
// with httptest. It counts as ready.
func (s *Server) Handler() http.Handler {
	s.ready.Store(true)
	return s.root()
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	if !s.ready.Load() {
		http.Error(w, "starting", http.StatusServiceUnavailable)
		return
	}
	_, _ = io.WriteString(w, "ok")
}

// Run listens on the configured address and serves until ctx ends; see Serve.
func (s *Server) Run(ctx context.Context, stdout io.Writer) error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("%s: listen on %q: %w", s.name, s.cfg.Listen, err)
	}
	return s.serve(ctx, ln, stdout)
}

// serve prints "listening on http://HOST:PORT" to stdout, serves ln until ctx ends,
// then shuts down gracefully within ShutdownGrace and returns nil.
func (s *Server) serve(ctx context.Context, ln net.Listener, stdout io.Writer) error {
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	var protocols http.Protocols // HTTP/1.1, and HTTP/2 without TLS for gRPC
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{
		Handler:           s.root(),
		Protocols:         &protocols,
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
		"workers", s.workers.size(), "queue", s.cfg.Queue.String(), "queue_length", s.cfg.QueueLength,
		"queue_timeout", s.cfg.QueueTimeout, "backpressure", s.cfg.Backpressure, "deadlines", s.cfg.Deadlines,
		"quotas", s.cfg.Quotas, "quota_redis", s.cfg.QuotaRedis)
	if s.redis != nil {
		defer s.redis.close()
	}

	select {
	case err := <-errc:
		return fmt.Errorf("%s: serve %s: %w", s.name, ln.Addr(), err)
	case <-ctx.Done():
	}
	s.ready.Store(false)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
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
