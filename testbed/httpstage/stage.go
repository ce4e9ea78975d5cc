// Package httpstage is the HTTP/1.1-aware stage of chaosrun's proxy
// process: a listener per edge, behind the edge's Toxiproxy proxy, that parses
// requests and answers (http_error) or delays (http_latency) those its toxics
// match, and passes every other byte through untouched — keep-alive and
// pipelined requests included. A stream it cannot parse is tunnelled as raw
// bytes. Toxics are added through a Toxiproxy-style API (see API).
package httpstage

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
)

// DialTimeout bounds connecting to the upstream.
const DialTimeout = 5 * time.Second

// Errors of the toxic set; API answers map them to 409 and 404.
var (
	ErrExists   = errors.New("toxic already exists")
	ErrNotFound = errors.New("toxic not found")
)

// Stage is one HTTP stage: a listener that forwards to an upstream.
type Stage struct {
	name     string
	seed     int64
	ln       net.Listener
	upstream atomic.Pointer[string]
	rules    atomic.Pointer[[]*rule] // copy on write, under mu

	requests, tunnels atomic.Int64

	// h2once readies the HTTP/2 forwarder on the first HTTP/2 stream.
	h2once sync.Once
	h2t    *http2.Transport

	mu     sync.Mutex
	conns  map[*conn]struct{}
	closed bool
	done   chan struct{}
	wg     sync.WaitGroup
}

// New starts a stage named name (its proxy's name) listening on listen and
// forwarding to upstream. seed seeds its toxics' random choices (0: random).
func New(name, listen, upstream string, seed int64) (*Stage, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("http stage %s: listen on %s: %w", name, listen, err)
	}
	if seed == 0 {
		seed = rand.Int64N(1<<62) + 1
	}
	s := &Stage{name: name, seed: seed, ln: ln, conns: map[*conn]struct{}{}, done: make(chan struct{})}
	s.upstream.Store(&upstream)
	s.rules.Store(&[]*rule{})
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr is the address the stage listens on.
func (s *Stage) Addr() string { return s.ln.Addr().String() }

// Upstream is where the stage forwards to.
func (s *Stage) Upstream() string { return *s.upstream.Load() }

// SetUpstream changes where new upstream connections go.
func (s *Stage) SetUpstream(addr string) { s.upstream.Store(&addr) }

// Counts returns how many requests the stage parsed and how many
// connections it tunnelled unparsed.
func (s *Stage) Counts() (requests, tunnels int64) { return s.requests.Load(), s.tunnels.Load() }

// Add puts a toxic in force and returns it as stored (seed resolved).
func (s *Stage) Add(t Toxic) (Toxic, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.rules.Load()
	if slices.ContainsFunc(old, func(r *rule) bool { return r.toxic.Name == t.Name }) {
		return Toxic{}, fmt.Errorf("http stage %s: toxic %s: %w", s.name, t.Name, ErrExists)
	}
	r, err := newRule(t, s.toxicSeed(t.Name))
	if err != nil {
		return Toxic{}, fmt.Errorf("http stage %s: %w", s.name, err)
	}
	rules := append(slices.Clip(old), r)
	s.rules.Store(&rules)
	return r.snapshot(), nil
}

// toxicSeed derives a toxic's seed from the stage's seed and the names, so
// that a replayed run draws the same numbers per toxic.
func (s *Stage) toxicSeed(toxic string) int64 {
	h := fnv.New64a()
	h.Write([]byte(s.name + "/" + toxic))
	v := int64((h.Sum64() ^ uint64(s.seed)) & (1<<62 - 1))
	if v == 0 {
		v = 1
	}
	return v
}

// Remove takes a toxic out of force and returns its final stats.
func (s *Stage) Remove(name string) (Toxic, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.rules.Load()
	i := slices.IndexFunc(old, func(r *rule) bool { return r.toxic.Name == name })
	if i < 0 {
		return Toxic{}, fmt.Errorf("http stage %s: toxic %s: %w", s.name, name, ErrNotFound)
	}
	rules := slices.Delete(slices.Clone(old), i, i+1)
	s.rules.Store(&rules)
	return old[i].snapshot(), nil
}

// Get returns a toxic in force with its stats.
func (s *Stage) Get(name string) (Toxic, bool) {
	for _, r := range *s.rules.Load() {
		if r.toxic.Name == name {
			return r.snapshot(), true
		}
	}
	return Toxic{}, false
}

// List returns every toxic in force, in the order they were added.
func (s *Stage) List() []Toxic {
	rules := *s.rules.Load()
	out := make([]Toxic, len(rules))
	for i, r := range rules {
		out[i] = r.snapshot()
	}
	return out
}

// Reset removes every toxic.
func (s *Stage) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules.Store(&[]*rule{})
}

// Close stops listening, closes every connection and waits for them.
func (s *Stage) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	err := s.ln.Close()
	for k := range s.conns {
		k.closeConns()
	}
	s.mu.Unlock()
	s.wg.Wait()
	if s.h2t != nil {
		s.h2t.CloseIdleConnections()
	}
	return err
}

func (s *Stage) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return // closed
		}
		k := newConn(s, c)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[k] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			k.serve()
			s.mu.Lock()
			delete(s.conns, k)
			s.mu.Unlock()
		}()
	}
}

// dial connects to the upstream and registers the connection so that Close
// reaches it.
func (s *Stage) dial(k *conn) (net.Conn, error) {
	u, err := net.DialTimeout("tcp", s.Upstream(), DialTimeout)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		u.Close()
		return nil, net.ErrClosed
	}
	k.mu.Lock()
	k.u = u
	k.mu.Unlock()
	return u, nil
}

// sleep waits d unless the stage closes first.
func (s *Stage) sleep(d time.Duration) bool { return s.sleepCtx(context.Background(), d) }
