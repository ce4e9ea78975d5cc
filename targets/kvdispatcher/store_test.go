package kvdispatcher

import (
	"testing"
	"time"
)

func TestStore(t *testing.T) {
	s := newStore()
	s.Seed(3, 10, 16)
	v, ok := s.Get("p1", seedKey(4))
	if !ok || len(v) != 16 || v[:8] != "p1/r0000" {
		t.Fatalf("Get(p1, r00004) = %q, %v", v, ok)
	}
	if _, ok := s.Get("p9", seedKey(0)); ok {
		t.Fatal("unseeded partition answered")
	}
	items, n := s.Scan("p2", seedKey(7), 5)
	if len(items) != 3 || n != 48 || items[0].Key != seedKey(7) || items[2].Key != seedKey(9) {
		t.Fatalf("Scan(p2, from r00007, 5) = %v, %d bytes", items, n)
	}
	s.Put("p2", item{Key: "r00007a", Value: "x"}, item{Key: seedKey(8), Value: "yy"})
	items, n = s.Scan("p2", seedKey(7), 3)
	if len(items) != 3 || items[1].Key != "r00007a" || items[2].Value != "yy" || n != 16+1+2 {
		t.Fatalf("after Put: Scan = %v, %d bytes", items, n)
	}
	if shardOf("p7", 4) != shardOf("p7", 4) || shardOf("", 3) < 0 {
		t.Fatal("ShardOf is not a function of its input")
	}
	// FNV-1a 32 of "a" is 0xe40c292c; workloads/kv.js must agree.
	if got := shardOf("a", 1000); got != int(uint32(0xe40c292c)%1000) {
		t.Fatalf("ShardOf(a, 1000) = %d", got)
	}
}

func TestThrottle(t *testing.T) {
	t0 := time.Unix(0, 0)
	th := newThrottle(capacity{ReadsPerSec: 10, BytesPerSec: 1000})
	ok := 0
	for range 20 {
		if a, _ := th.AdmitRead(t0); a {
			ok++
		}
	}
	if ok != 10 {
		t.Fatalf("20 reads at once with 10/s (1 s banked): %d admitted, want 10", ok)
	}
	th.ChargeBytes(t0, 5000)
	if a, budget := th.AdmitRead(t0.Add(time.Second)); a || budget != "bytes/s" {
		t.Fatalf("after 5000 bytes at 1000/s, 1 s later: admitted %v (%s), want refused on bytes/s", a, budget)
	}
	if a, _ := th.AdmitRead(t0.Add(5 * time.Second)); !a {
		t.Fatal("5 s later the debt is paid: want admitted")
	}
	if a, _ := newThrottle(capacity{}).AdmitWrite(t0, 1<<30); !a {
		t.Fatal("no capacity set means unlimited")
	}
}
