package stream

import "net"

// waiter is a connection that has not yet been let in.
type waiter struct {
	c   net.Conn
	n   int    // connection number: arrival order
	src string // source address, without the port
	// why is set when the receiver cut the connection while it waited:
	// reasonDropped or reasonClosing.
	why string
}

// waitingSet holds the connections waiting for their hello, per source in
// arrival order, within maxPending in total and maxPendingPerSource per
// source, plus room for the streams beyond the first a receiver expects
// (extra). Its owner synchronises access.
type waitingSet struct {
	bySource map[string][]*waiter
	n        int
	extra    int
}

// add adds w and returns the connection that must go to keep within the
// bounds (marked reasonDropped, no longer in the set), or nil: the oldest
// of w's source when that source is at its bound, else the oldest of the
// source with the most waiting when the total is at its bound.
func (s *waitingSet) add(w *waiter) *waiter {
	if s.bySource == nil {
		s.bySource = make(map[string][]*waiter)
	}
	var victim *waiter
	switch {
	case len(s.bySource[w.src]) >= maxPendingPerSource+s.extra:
		victim = s.bySource[w.src][0]
	case s.n >= maxPending+s.extra:
		victim = s.heaviest()[0]
	}
	if victim != nil {
		s.remove(victim)
		victim.why = reasonDropped
	}
	s.bySource[w.src] = append(s.bySource[w.src], w)
	s.n++
	return victim
}

// heaviest is the queue of the source with the most waiting connections;
// of equals, the one whose oldest came first.
func (s *waitingSet) heaviest() []*waiter {
	var best []*waiter
	for _, q := range s.bySource {
		if len(q) > len(best) || (len(q) == len(best) && q[0].n < best[0].n) {
			best = q
		}
	}
	return best
}

// remove takes w out of the set, if it is in it.
func (s *waitingSet) remove(w *waiter) {
	q := s.bySource[w.src]
	for i, x := range q {
		if x == w {
			q = append(q[:i], q[i+1:]...)
			s.n--
			break
		}
	}
	if len(q) == 0 {
		delete(s.bySource, w.src)
		return
	}
	s.bySource[w.src] = q
}

// drain empties the set, marking every connection with why, and returns
// them.
func (s *waitingSet) drain(why string) []*waiter {
	var out []*waiter
	for _, q := range s.bySource {
		for _, w := range q {
			w.why = why
			out = append(out, w)
		}
	}
	s.bySource, s.n = nil, 0
	return out
}

// sourceOf is the host part of a connection's remote address.
func sourceOf(c net.Conn) string {
	a := c.RemoteAddr()
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}
