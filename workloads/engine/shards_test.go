package engine

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// streamingEngine is an engine whose shards stream from this process, as a
// load process would: a hello with the shard's token, a window, the end.
// Before its hello, a forger without the token sends a window of its own
// to the same receiver.
type streamingEngine struct{ tokens chan string }

func (streamingEngine) Name() string { return "fake" }

func (e streamingEngine) RunShard(ctx context.Context, sh Shard) error {
	e.tokens <- sh.StreamToken
	forge, err := net.Dial("tcp", sh.StreamAddr)
	if err != nil {
		return err
	}
	fmt.Fprint(forge, `{"type":"hello","version":1,"token":"guess"}`+"\n"+window(1_000_000)+"\n")
	// Wait for the refusal: a forger still unread when the real stream
	// ends would be refused as "receiver closing" instead.
	_ = forge.SetReadDeadline(time.Now().Add(5 * time.Second))
	refusal, err := io.ReadAll(forge)
	forge.Close()
	if err != nil || !strings.Contains(string(refusal), "token") {
		return fmt.Errorf("the forger's hello was answered %q, %v", refusal, err)
	}
	c, err := net.Dial("tcp", sh.StreamAddr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, `{"type":"hello","version":1,"token":%q}`+"\n", sh.StreamToken)
	answer, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.Contains(answer, "welcome") {
		return fmt.Errorf("hello answered %q, %v", answer, err)
	}
	_, err = fmt.Fprint(c, window(10)+"\n"+`{"type":"end","dropped":0}`+"\n")
	return err
}

// runShards runs the load to its end and collects its windows and notes.
func runShards(t *testing.T, l Load) (record.WindowSource, []string) {
	t.Helper()
	if err := l.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for err := range l.Ended() {
		if err != nil {
			t.Fatal(err)
		}
	}
	src, notes, err := l.Collect(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return src, notes
}

func window(reqs int) string {
	return fmt.Sprintf(`{"type":"window","start":"2026-01-01T00:00:00Z","series":[{"metric":"http_reqs","kind":"counter","count":%d,"sum":%d}]}`, reqs, reqs)
}

// TestShardsStreamWithTheRunsToken: without a token in Results, the run
// makes one, the same for every shard; only the streams that show it
// count, and the forgers' refused connections are in the notes.
func TestShardsStreamWithTheRunsToken(t *testing.T) {
	e := streamingEngine{tokens: make(chan string, 2)}
	src, notes := runShards(t, NewShardedLoad(e, 2, LoadSpec{OutDir: t.TempDir()}, Results{}))
	if a, b := <-e.tokens, <-e.tokens; a == "" || a != b {
		t.Fatalf("shards were given tokens %q and %q; want one token, not empty", a, b)
	}
	var reqs float64
	if err := src.EachWindow(func(w record.Window) error {
		for _, s := range w.Series {
			reqs += s.Sum
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if reqs != 20 {
		t.Errorf("%v requests in the windows, want 20 (10 a shard, none forged)", reqs)
	}
	joined := strings.Join(notes, "\n")
	for _, want := range []string{"results stream of fake shard 1 of 2: refused 1 connection(s): 1 no or wrong token", "fake shard 2 of 2: refused 1"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notes lack %q:\n%s", want, joined)
		}
	}
}

// silentEngine's shard first opens a connection to its receiver that
// never sends a hello, waits until the receiver has given up on it, then
// streams as a load process does.
type silentEngine struct{ wait time.Duration }

func (silentEngine) Name() string { return "fake" }

func (e silentEngine) RunShard(ctx context.Context, sh Shard) error {
	silent, err := net.Dial("tcp", sh.StreamAddr)
	if err != nil {
		return err
	}
	defer silent.Close()
	_ = silent.SetReadDeadline(time.Now().Add(e.wait))
	answer, err := io.ReadAll(silent) // the refusal, then the close
	if err != nil || !strings.Contains(string(answer), "no hello") {
		return fmt.Errorf("the receiver kept a connection without a hello for %s: read %q, %v", e.wait, answer, err)
	}
	return streamingEngine{tokens: make(chan string, 1)}.RunShard(ctx, sh)
}

// TestShardsRefuseASilentConnection: a connection that sends no hello
// within the hello deadline is closed and refused as "no hello", and the
// refusal is among the run's problems; the shard's own stream counts.
func TestShardsRefuseASilentConnection(t *testing.T) {
	const deadline = 200 * time.Millisecond
	t0 := time.Now()
	_, notes := runShards(t, NewShardedLoad(silentEngine{wait: 10 * deadline}, 1, LoadSpec{OutDir: t.TempDir()}, Results{HelloTimeout: deadline}))
	joined := strings.Join(notes, "\n")
	// The shard's stream also meets a forger (streamingEngine): a second refusal.
	if !strings.Contains(joined, "results stream of fake: refused 2 connection(s): 1 no hello, 1 no or wrong token (first: connection 1 from 127.0.0.1:") ||
		!strings.Contains(joined, "refused: no hello within 200ms)") {
		t.Errorf("notes lack the silent connection's refusal:\n%s", joined)
	}
	if took := time.Since(t0); took > 5*time.Second {
		t.Errorf("took %s: the deadline given was not the one applied", took)
	}
}
