package gameday

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// hub fans snapshots out to the page's Server-Sent Events streams.
type hub struct {
	mu     sync.Mutex
	subs   map[chan []byte]struct{}
	last   []byte
	closed chan struct{}
	once   sync.Once
}

func newHub() *hub { return &hub{subs: map[chan []byte]struct{}{}, closed: make(chan struct{})} }

// publish sends b to every subscriber; a subscriber that is behind loses
// the snapshot (the next one replaces it).
func (h *hub) publish(b []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = b
	for c := range h.subs {
		select {
		case c <- b:
		default:
		}
	}
}

func (h *hub) subscribe() (chan []byte, []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := make(chan []byte, 4)
	h.subs[c] = struct{}{}
	return c, h.last
}

func (h *hub) unsubscribe(c chan []byte) {
	h.mu.Lock()
	delete(h.subs, c)
	h.mu.Unlock()
}

// close ends every stream.
func (h *hub) close() { h.once.Do(func() { close(h.closed) }) }

// serveEvents streams snapshots as "data: JSON" events until the client
// leaves or the game day ends.
func (h *hub) serveEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	c, last := h.subscribe()
	defer h.unsubscribe(c)
	fmt.Fprint(w, "retry: 1000\n\n")
	if last != nil {
		fmt.Fprintf(w, "data: %s\n\n", last)
	}
	fl.Flush()
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		select {
		case b := <-c:
			if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
				return
			}
			fl.Flush()
		case <-keep.C:
			fmt.Fprint(w, ": keep-alive\n\n")
			fl.Flush()
		case <-h.closed:
			fmt.Fprint(w, "event: end\ndata: {}\n\n")
			fl.Flush()
			return
		case <-r.Context().Done():
			return
		}
	}
}
