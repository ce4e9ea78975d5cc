package stream

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/chaosrun/chaosrun/models/wire"
)

// reasonShard refuses a hello whose shard the receiver does not wait for.
const reasonShard = "unknown or repeated shard"

// maxShardName bounds a shard's name in a hello.
const maxShardName = 64

// Sender is what a receiver knows of one sender of a stream: a load shard
// named in its hello, or, for a hello that names none, its connection.
type Sender struct {
	// Shard is the name its hello gave ("1/4"); empty for a stream that
	// named none.
	Shard string
	// From is the address of its latest connection.
	From string
	// Hello is when its first hello arrived, Last when its latest line
	// did, Ended when its end marker did (zero: none yet).
	Hello, Last, Ended time.Time
	// Conns counts the connections it streamed on (more than one: it
	// reconnected); Active says one is open.
	Conns  int
	Active bool
}

// Name names the sender in messages: "shard 1/4", or "the stream on
// connection 3 from 10.0.0.5:41000".
func (s Sender) Name() string {
	if s.Shard != "" {
		return "shard " + s.Shard
	}
	return "the stream from " + s.From
}

// senderSet tracks the senders of a receiver's streams; its owner
// synchronises access.
type senderSet struct {
	byKey  map[string]*Sender
	order  []string
	ofConn map[int]string // connection number -> sender key
	// check, when set, refuses a hello's shard name.
	check func(shard string) error
	// copyTo, when set, receives every line the streams let in, hellos
	// without their token; copyErr is its first failure.
	copyTo  io.Writer
	copyErr error
}

// key is the sender key of a connection whose hello named shard.
func senderKey(n int, shard string) string {
	if shard != "" {
		return "shard " + shard
	}
	return fmt.Sprintf("connection %d", n)
}

// admitShard says whether connection n, whose hello names shard, may be
// a stream now: the shard is one the receiver waits for, has not ended
// and has no other connection open (busy: wait for it to end).
func (s *senderSet) admitShard(shard string) (busy bool, _ *refusal) {
	if shard == "" {
		return false, nil
	}
	if len(shard) > maxShardName {
		return false, refuseAs(reasonShard, "shard name of %d bytes: at most %d", len(shard), maxShardName)
	}
	if s.check != nil {
		if err := s.check(shard); err != nil {
			return false, refuseAs(reasonShard, "shard %q: %v", shard, err)
		}
	}
	if cur := s.byKey[senderKey(0, shard)]; cur != nil {
		if !cur.Ended.IsZero() {
			return false, refuseAs(reasonAfterEnd, "shard %s already sent its end", shard)
		}
		return cur.Active, nil
	}
	return false, nil
}

// open notes connection n from from as a stream of shard.
func (s *senderSet) open(n int, shard, from string, now time.Time) {
	if s.byKey == nil {
		s.byKey, s.ofConn = map[string]*Sender{}, map[int]string{}
	}
	k := senderKey(n, shard)
	cur := s.byKey[k]
	if cur == nil {
		cur = &Sender{Shard: shard, Hello: now}
		s.byKey[k] = cur
		s.order = append(s.order, k)
	}
	cur.From, cur.Conns, cur.Active, cur.Last = from, cur.Conns+1, true, now
	s.ofConn[n] = k
}

// close notes that connection n ended.
func (s *senderSet) close(n int) {
	if cur := s.byKey[s.ofConn[n]]; cur != nil {
		cur.Active = false
	}
}

// line notes a line of connection n; ended says it was an end marker.
func (s *senderSet) line(n int, ended bool, now time.Time) {
	cur := s.byKey[s.ofConn[n]]
	if cur == nil {
		return
	}
	cur.Last = now
	if ended && cur.Ended.IsZero() {
		cur.Ended = now
	}
}

// list copies the senders out, in order of their first hello.
func (s *senderSet) list() []Sender {
	out := make([]Sender, 0, len(s.order))
	for _, k := range s.order {
		out = append(out, *s.byKey[k])
	}
	return slices.Clip(out)
}

// copyLine writes line (number ln of its connection) to the copy: a
// hello without its token.
func (s *senderSet) copyLine(ln int, b []byte) {
	if s.copyTo == nil || s.copyErr != nil {
		return
	}
	if ln == 1 {
		var h wire.Hello
		if err := json.Unmarshal(b, &h); err == nil && h.Type == wire.TypeHello {
			h.Token = ""
			b, _ = json.Marshal(h)
		}
	}
	if _, err := s.copyTo.Write(append(b[:len(b):len(b)], '\n')); err != nil {
		s.copyErr = fmt.Errorf("copy of the results stream: %w", err)
	}
}

// helloShard is the shard a hello line names, if any.
func helloShard(hello []byte) string {
	var h wire.Hello
	_ = json.Unmarshal(hello, &h)
	return h.Shard
}
