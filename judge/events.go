package judge

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/guard"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
)

// The events endpoint's paths: fault apply asks for load's start (the
// schedule's zero), sends each event as it happens, and says when its
// schedule is done.
const (
	PathStart  = "/v1/start"
	PathEvents = "/v1/events"
	PathDone   = "/v1/done"
)

// maxEventsBody bounds one request's body.
const maxEventsBody = 1 << 20

// eventSink is the judge's side of the events endpoint: what fault apply
// reported. Safe for concurrent use.
type eventSink struct {
	token   string
	started <-chan struct{}
	start   func() time.Time

	mu       sync.Mutex
	events   []record.FaultEvent
	reported bool // a reporter reached the endpoint with the token
	done     chan struct{}
	doneOnce sync.Once
	failed   int
	refused  int
	// onRefused sees each refused request's reason.
	onRefused func(error)
}

func newEventSink(token string, started <-chan struct{}, start func() time.Time, onRefused func(error)) *eventSink {
	return &eventSink{token: token, started: started, start: start, done: make(chan struct{}), onRefused: onRefused}
}

// list is a copy of the events so far.
func (s *eventSink) list() []record.FaultEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]record.FaultEvent(nil), s.events...)
}

// refusedCount is how many requests came without the token.
func (s *eventSink) refusedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// status says whether a reporter came and whether it said done.
func (s *eventSink) status() (reported, done bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		done = true
	default:
	}
	return s.reported, done
}

func (s *eventSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	auth, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !guard.TokenMatches(auth, s.token) {
		s.mu.Lock()
		s.refused++
		s.mu.Unlock()
		if s.onRefused != nil {
			s.onRefused(fmt.Errorf("events endpoint: %s %s from %s refused: no or wrong token", r.Method, r.URL.Path, r.RemoteAddr))
		}
		httpError(w, http.StatusUnauthorized, "no or wrong token (Authorization: Bearer TOKEN, the judge's --token)")
		return
	}
	s.mu.Lock()
	s.reported = true
	s.mu.Unlock()
	switch {
	case r.URL.Path == PathStart && r.Method == http.MethodGet:
		s.serveStart(w, r)
	case r.URL.Path == PathEvents && r.Method == http.MethodPost:
		s.serveEvents(w, r)
	case r.URL.Path == PathDone && r.Method == http.MethodPost:
		s.serveDone(w, r)
	default:
		httpError(w, http.StatusNotFound, fmt.Sprintf("%s %s: allowed: GET %s, POST %s, POST %s", r.Method, r.URL.Path, PathStart, PathEvents, PathDone))
	}
}

// serveStart answers with load's start once the first shard said hello.
func (s *eventSink) serveStart(w http.ResponseWriter, r *http.Request) {
	select {
	case <-s.started:
		writeJSON(w, map[string]string{"start": s.start().UTC().Format(time.RFC3339Nano)})
	case <-r.Context().Done():
	}
}

// serveEvents takes fault events, one JSON object a line; a malformed one
// refuses the whole request (the reporter sees why) and keeps nothing.
func (s *eventSink) serveEvents(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxEventsBody))
	if err != nil {
		httpError(w, http.StatusRequestEntityTooLarge, err.Error())
		return
	}
	var evs []record.FaultEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, maxEventsBody)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		ev, err := parseEvent(sc.Bytes())
		if err != nil {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("line %d: %v", n, err))
			return
		}
		evs = append(evs, ev)
	}
	s.mu.Lock()
	s.events = append(s.events, evs...)
	s.mu.Unlock()
	writeJSON(w, map[string]int{"accepted": len(evs)})
}

func (s *eventSink) serveDone(w http.ResponseWriter, r *http.Request) {
	var d struct {
		Failed int `json:"failed"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxEventsBody)).Decode(&d); err != nil || d.Failed < 0 {
		httpError(w, http.StatusBadRequest, `want {"failed": N}, N >= 0`)
		return
	}
	s.mu.Lock()
	s.failed = d.Failed
	s.mu.Unlock()
	s.doneOnce.Do(func() { close(s.done) })
	writeJSON(w, map[string]bool{"ok": true})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// serveEvents serves the endpoint on addr until ctx ends; it returns the
// bound address.
func serveEvents(ctx context.Context, addr string, tlsCfg *tls.Config, h http.Handler) (string, func(), error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("events endpoint: listen on %s: %w", addr, err)
	}
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: time.Minute}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	stop := func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		_ = srv.Close()
		<-done
	}
	return ln.Addr().String(), stop, nil
}

// Reporter sends a fault schedule's events to a judge's events endpoint
// (`chaosrun fault apply --report-to URL`).
type Reporter struct {
	// URL is the endpoint's base URL, http(s)://HOST:PORT.
	URL   string
	Token string
	// Client defaults to one with a 10 s timeout per request.
	Client *http.Client
}

func (r *Reporter) do(ctx context.Context, method, path string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(r.URL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+r.Token)
	c := r.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = strconv.Quote(string(b))
		}
		return fmt.Errorf("judge at %s answered %s: %s", r.URL, resp.Status, e.Error)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// Start waits, up to wait, for the judge to know load's start: the
// schedule's zero. A refusal (wrong token) is not retried.
func (r *Reporter) Start(ctx context.Context, wait time.Duration) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	c := &http.Client{}
	if r.Client != nil {
		c = &http.Client{Transport: r.Client.Transport}
	}
	rr := Reporter{URL: r.URL, Token: r.Token, Client: c}
	for {
		var got struct {
			Start time.Time `json:"start"`
		}
		err := rr.do(ctx, http.MethodGet, PathStart, nil, &got)
		if err == nil {
			return got.Start, nil
		}
		if strings.Contains(err.Error(), "answered") || ctx.Err() != nil {
			return time.Time{}, fmt.Errorf("load start from the judge: %w", errors.Join(err, context.Cause(ctx)))
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("load start from the judge: %w", err)
		case <-time.After(time.Second):
		}
	}
}

// Event sends one event.
func (r *Reporter) Event(ctx context.Context, ev record.FaultEvent) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	return r.do(ctx, http.MethodPost, PathEvents, b, nil)
}

// Done says the schedule ended, with failed actions.
func (r *Reporter) Done(ctx context.Context, failed int) error {
	b, _ := json.Marshal(map[string]int{"failed": failed})
	return r.do(ctx, http.MethodPost, PathDone, b, nil)
}

// EventReport passes a fault schedule's events on, as they happen: to a
// judge (Reporter), and to an events file (one JSON object a line, what
// `chaosrun judge --faults FILE` reads). Its errors are kept, not fatal:
// the schedule goes on.
type EventReport struct {
	Reporter *Reporter
	File     io.Writer
	// Log, when set, hears of each failure to pass an event on, at Done.
	Log  io.Writer
	errs []error
}

// Emit passes ev on.
func (e *EventReport) Emit(ctx context.Context, ev record.FaultEvent) {
	if e.File != nil {
		b, _ := json.Marshal(ev)
		if _, err := e.File.Write(append(b, '\n')); err != nil {
			e.errs = append(e.errs, fmt.Errorf("events file: %w", err))
		}
	}
	if e.Reporter != nil {
		if err := e.Reporter.Event(ctx, ev); err != nil {
			e.errs = append(e.errs, fmt.Errorf("%s %s: %w", ev.Action, ev.Fault, err))
		}
	}
}

// Done tells the judge the schedule ended; the error joins every failure
// to pass an event on, which Log hears of line by line.
func (e *EventReport) Done(ctx context.Context, failed int) error {
	if e.Reporter != nil {
		if err := e.Reporter.Done(ctx, failed); err != nil {
			e.errs = append(e.errs, err)
		}
	}
	err := errors.Join(e.errs...)
	if e.Log != nil {
		report.PrintLines(e.Log, "chaosrun fault apply: reporting", err)
	}
	return err
}
