package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

const testToken = "s3cret-token"

// receiving starts Receive for n shards on loopback and returns where it
// listens, and a wait for its record.
func receiving(t *testing.T, n int, dur, margin time.Duration) (streams, events string, result func() *record.Run) {
	t.Helper()
	sc := testScenario()
	sc.Workload.Duration = scenarioDuration(dur)
	addrs := make(chan [2]string, 1)
	var mu sync.Mutex
	got := map[string]string{}
	o := ReceiveOptions{Listen: "127.0.0.1:0", Token: testToken, Shards: n, Wait: 10 * time.Second, Margin: margin, SpillDir: t.TempDir(),
		OnListen: func(what, addr string) {
			mu.Lock()
			defer mu.Unlock()
			got[what] = addr
			if len(got) == 2 {
				addrs <- [2]string{got["results streams"], got["fault events"]}
			}
		}}
	done := make(chan *record.Run, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	go func() {
		rec, err := Receive(ctx, sc, o)
		if err != nil {
			t.Error(err)
		}
		done <- rec
	}()
	a := <-addrs
	return a[0], "http://" + a[1], func() *record.Run {
		rec := <-done
		t.Cleanup(func() { rec.Close() })
		return rec
	}
}

// send streams ws as shard to addr with token; ended sends the end.
func send(t *testing.T, addr, token, shard string, ws []record.Window, ended bool) error {
	t.Helper()
	w, err := stream.Dial(context.Background(), stream.DialConfig{Addr: addr, Token: token}, stream.Hello{Extension: "test", Shard: shard})
	if err != nil {
		return err
	}
	for _, win := range ws {
		if err := w.Window(win); err != nil {
			return err
		}
	}
	if ended {
		return w.End(0)
	}
	return w.Close()
}

// TestReceiveMergesShardsExactly: two shards' streams, received side by
// side, hold exactly the windows merged directly; the fault events come
// from the reporter; nothing fails.
func TestReceiveMergesShardsExactly(t *testing.T) {
	addr, evURL, result := receiving(t, 2, time.Second, 5*time.Second)
	rep := &Reporter{URL: evURL, Token: testToken}
	var wg sync.WaitGroup
	for i, shard := range []string{"0/2", "1/2"} {
		wg.Go(func() {
			if err := send(t, addr, testToken, shard, shardWindows(t, i, 2), true); err != nil {
				t.Error(err)
			}
		})
	}
	if _, err := rep.Start(context.Background(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, ev := range events() {
		if err := rep.Event(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := rep.Done(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	rec := result()
	if rec.Incomplete {
		t.Fatalf("incomplete: %v", rec.Problems)
	}
	want, err := record.MergeWindows(shardWindows(t, 0, 2), shardWindows(t, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	var got []record.Window
	if err := rec.EachWindow(func(w record.Window) error { got = append(got, w); return nil }); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if !bytes.Equal(gb, wb) {
		t.Errorf("merged windows differ from the reference:\n got %.300s\nwant %.300s", gb, wb)
	}
	if len(rec.Faults) != 2 || rec.Faults[0].Action != record.Applied {
		t.Errorf("faults %+v", rec.Faults)
	}
}

// TestReceiveNamesMissingAndDeadShards: a shard that never connects and
// one whose stream ends without its end marker each fail a verdict with
// their name; the record is incomplete.
func TestReceiveNamesMissingAndDeadShards(t *testing.T) {
	addr, _, result := receiving(t, 3, 500*time.Millisecond, 500*time.Millisecond)
	if err := send(t, addr, testToken, "0/3", shardWindows(t, 0, 3), true); err != nil {
		t.Fatal(err)
	}
	if err := send(t, addr, testToken, "2/3", shardWindows(t, 2, 3), false); err != nil {
		t.Fatal(err)
	}
	rec := result()
	if !rec.Incomplete {
		t.Error("record not incomplete")
	}
	names := map[string]string{}
	for _, v := range rec.Verdicts {
		if v.Source == record.SourceRun {
			names[v.Assertion] = v.Error
		}
	}
	if !strings.Contains(names["shard 1/3"], "never connected") || !strings.Contains(names["shard 2/3"], "without its end marker") || len(names) != 2 {
		t.Errorf("shard verdicts %v", names)
	}
}

// TestReceiveRefusesStrangers: a wrong token, a shard this judge does not
// wait for, and an event request with a wrong token are refused with a
// clear error; nothing of theirs counts.
func TestReceiveRefusesStrangers(t *testing.T) {
	defer func(d time.Duration) { eventsWait = d }(eventsWait)
	eventsWait = 200 * time.Millisecond
	addr, evURL, result := receiving(t, 1, 300*time.Millisecond, 300*time.Millisecond)
	err := send(t, addr, "wrong", "0/1", shardWindows(t, 0, 1), true)
	if err == nil || !strings.Contains(err.Error(), "wrong token") {
		t.Errorf("wrong token: %v", err)
	}
	err = send(t, addr, testToken, "3/4", shardWindows(t, 0, 1), true)
	if err == nil || !strings.Contains(err.Error(), "waits for 1 shard(s), named 0/1") {
		t.Errorf("unknown shard: %v", err)
	}
	err = (&Reporter{URL: evURL, Token: "wrong"}).Event(context.Background(), events()[0])
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "no or wrong token") {
		t.Errorf("events with a wrong token: %v", err)
	}
	bad := &Reporter{URL: evURL, Token: testToken}
	if err := bad.do(context.Background(), "POST", PathEvents, []byte(`{"fault":"x","action":"exploded","actual":"2026-01-01T00:00:00Z"}`), nil); err == nil || !strings.Contains(err.Error(), "allowed: applied, reverted, failed") {
		t.Errorf("malformed event: %v", err)
	}
	if err := send(t, addr, testToken, "0/1", shardWindows(t, 0, 1), true); err != nil {
		t.Fatal(err)
	}
	rec := result()
	if !strings.Contains(strings.Join(rec.Problems, "\n"), "refused 1 request(s) without the token") {
		t.Errorf("problems %v: the refused event request is not counted", rec.Problems)
	}
	if rec.Incomplete || len(rec.Faults) != 0 {
		t.Errorf("incomplete %v (%v), faults %+v", rec.Incomplete, rec.Problems, rec.Faults)
	}
	var n int64
	_ = rec.EachWindow(func(w record.Window) error {
		for _, s := range w.Series {
			if s.Metric == "http_reqs" {
				n += s.Count
			}
		}
		return nil
	})
	if n != 200 {
		t.Errorf("%d requests in the record, want 200 (the refused streams' must not count)", n)
	}
}

func TestShardCheckAndEventsAddr(t *testing.T) {
	check := shardCheck(4)
	for name, ok := range map[string]bool{"0/4": true, "3/4": true, "4/4": false, "1/2": false, "x": false, "-1/4": false, "0:1/4": false} {
		if err := check(name); (err == nil) != ok {
			t.Errorf("shard %q: %v", name, err)
		}
	}
	for _, tc := range []struct{ listen, bound, given, want string }{
		{"0.0.0.0:7000", "0.0.0.0:7000", "", "0.0.0.0:7001"},
		{"127.0.0.1:0", "127.0.0.1:41234", "", "127.0.0.1:0"},
		{"", "127.0.0.1:41234", "", "127.0.0.1:0"},
		{"0.0.0.0:7000", "0.0.0.0:7000", "0.0.0.0:9000", "0.0.0.0:9000"},
	} {
		if got, err := eventsAddr(tc.listen, tc.bound, tc.given); err != nil || got != tc.want {
			t.Errorf("eventsAddr(%q, %q, %q) = %q, %v; want %q", tc.listen, tc.bound, tc.given, got, err, tc.want)
		}
	}
}
