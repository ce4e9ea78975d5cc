package stream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/models/wire"
)

// Connection scripts for FuzzReceiver: bytes below 0x05 are commands, the
// rest is what the current connection sends.
const (
	// 0x00, 0x01, 0x02: make connection 0, 1 or 2 the current one,
	// opening it if it is not open (connections stay open side by side).
	cmdClose = 0x03 // close the current connection
	cmdHuge  = 0x04 // the next byte N: send N × 4 KiB of "x" (N at most 80), against a line limit of 64 KiB
)

const fuzzToken = "t0k"

// fuzzConn is one scripted connection: what it sends, in order. It reads
// what the receiver answers, as the output does: closing a socket with
// unread data resets it.
type fuzzConn struct {
	sent    []byte
	c       net.Conn
	drained chan struct{}
}

func (fc *fuzzConn) close() {
	fc.c.Close()
	<-fc.drained
}

// admissible reports whether a connection's first line is a hello this
// receiver lets in: within maxHello, wire version 1, the token.
func (fc *fuzzConn) admissible() bool {
	line, _, _ := bytes.Cut(fc.sent, []byte("\n"))
	if len(line)+1 > maxHello {
		return false
	}
	var h wire.Hello
	return json.Unmarshal(line, &h) == nil && h.Type == wire.TypeHello && h.Version == WireVersion && h.Token == fuzzToken
}

// closeWrite ends what c sends; the receiver then closes it.
func closeWrite(c net.Conn) { _ = c.(*net.TCPConn).CloseWrite() }

// runScript plays a connection script against addr and returns the
// connections with what each sent. Every connection is closed at the end.
func runScript(t *testing.T, addr string, script []byte) []*fuzzConn {
	var all []*fuzzConn
	var slots [3]*fuzzConn
	cur, huge := 0, 0
	send := func(b []byte) {
		fc := slots[cur]
		if fc == nil {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			fc = &fuzzConn{c: c, drained: make(chan struct{})}
			go func() {
				defer close(fc.drained)
				_, _ = io.Copy(io.Discard, c)
			}()
			slots[cur] = fc
			all = append(all, fc)
		}
		fc.sent = append(fc.sent, b...)
		_ = fc.c.SetWriteDeadline(time.Now().Add(2 * time.Second))
		_, _ = fc.c.Write(b) // a refused connection is closed under it
	}
	for i := 0; i < len(script); {
		switch b := script[i]; {
		case b < cmdClose:
			cur = int(b)
			i++
		case b == cmdClose:
			if slots[cur] != nil {
				closeWrite(slots[cur].c)
				slots[cur] = nil
			}
			i++
		case b == cmdHuge:
			n := 0
			if i+1 < len(script) {
				n = min(int(script[i+1]), 80, 160-huge)
			}
			huge += n
			send(bytes.Repeat([]byte("x"), n<<12))
			i += 2
		default:
			j := bytes.IndexFunc(script[i:], func(r rune) bool { return r <= cmdHuge })
			if j < 0 {
				j = len(script) - i
			}
			send(script[i : i+j])
			i += j
		}
	}
	for _, fc := range all {
		closeWrite(fc.c)
	}
	return all
}

// FuzzReceiver plays connection scripts (several connections side by
// side, hellos with and without the token, partial and huge lines,
// windows interleaved between connections) against a receiver with a
// token. Whatever the script: nothing from a connection without the token
// counts; the counts agree with each other; and when exactly one
// connection can be let in, the receiver holds what Decode reads from its
// bytes.
func FuzzReceiver(f *testing.F) {
	defer func(d time.Duration, n int) { handoverWait, lineLimit = d, n }(handoverWait, lineLimit)
	handoverWait, lineLimit = 20*time.Millisecond, 64<<10
	hello := `{"type":"hello","version":1,"token":"t0k"}` + "\n"
	win := `{"type":"window","start":"2026-01-01T00:00:00Z","series":[{"metric":"http_reqs","kind":"counter","count":3,"sum":3}]}` + "\n"
	end := `{"type":"end","dropped":1}` + "\n"
	f.Add([]byte(hello + win + end))
	f.Add([]byte(`{"type":"hello","version":1,"token":"nope"}` + "\n" + win + "\x01" + hello + win + end))
	f.Add([]byte(hello + "\x01" + hello + win + "\x00" + win + "\x03\x01" + end))
	f.Add([]byte(hello + `{"type":"wind` + "\x03" + hello + win + end))
	f.Add([]byte(hello + "\x04\x11\n" + win + end))
	f.Add([]byte(hello + "\x04\x01" + "\x04\x10" + win + end))
	f.Add([]byte(win + "\x01" + `{"type":"hello","version":1}` + "\n" + win + "\x02" + hello + "\x04\x01" + win))
	f.Fuzz(func(t *testing.T, script []byte) {
		r, err := ListenWith(context.Background(), Config{Token: fuzzToken})
		if err != nil {
			t.Fatal(err)
		}
		conns := runScript(t, r.Addr(), script)
		// Every connection is served before the receiver closes.
		for i := 0; ; i++ {
			if sum := r.Summary(); sum.Streams+sum.Refused == len(conns) {
				break
			}
			if i == 50000 {
				t.Fatalf("%d connections, %+v", len(conns), brief(r.Summary()))
			}
			time.Sleep(100 * time.Microsecond)
		}
		t0 := time.Now()
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(t0); d > closeGrace+2*time.Second {
			t.Fatalf("Close took %s", d)
		}
		for _, fc := range conns {
			fc.close()
		}
		checkFuzzSummary(t, r.Summary(), conns)
	})
}

func checkFuzzSummary(t *testing.T, sum Summary, conns []*fuzzConn) {
	var admissible []*fuzzConn
	for _, fc := range conns {
		if fc.admissible() {
			admissible = append(admissible, fc)
		}
	}
	byReason := 0
	for _, n := range sum.RefusedByReason {
		byReason += n
	}
	switch {
	case byReason != sum.Refused || len(sum.RefusedErrors) > maxKeptErrors || len(sum.Errors) > maxKeptErrors:
		t.Fatalf("refused %d, by reason %v, %d errors kept", sum.Refused, sum.RefusedByReason, len(sum.RefusedErrors))
	case sum.Streams > len(admissible):
		t.Fatalf("%d streams, %d refused, of %d connections (%d with the token)", sum.Streams, sum.Refused, len(conns), len(admissible))
	case len(admissible) == 0 && (len(sum.Windows) > 0 || sum.Ended || sum.Malformed > 0 || sum.Hello.Version != 0):
		t.Fatalf("connections without the token reached the summary: %+v", sum)
	case len(admissible) != 1:
		return
	}
	want, _ := Decode(bytes.NewReader(admissible[0].sent))
	if !reflect.DeepEqual(sum.Windows, want.Windows) || sum.Ended != want.Ended || sum.Dropped != want.Dropped || sum.Malformed != want.Malformed {
		t.Fatalf("the stream's summary differs from Decode of its bytes:\nreceiver %s\ndecode   %s", brief(sum), brief(want))
	}
}

func brief(s Summary) string {
	return fmt.Sprintf("%d windows, ended %v, dropped %d, malformed %d %v", len(s.Windows), s.Ended, s.Dropped, s.Malformed, s.Errors)
}
