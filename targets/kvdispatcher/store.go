package kvdispatcher

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// item is one row of a partition.
type item struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// store is one shard's data: partitions of rows ordered by sort key, in
// memory. Safe for concurrent use.
type store struct {
	mu    sync.RWMutex
	parts map[string]*partition
}

type partition struct {
	keys []string // sorted
	vals map[string]string
}

// newStore returns an empty store.
func newStore() *store { return &store{parts: map[string]*partition{}} }

// seedKey is the sort key of row i of a seeded partition.
func seedKey(i int) string { return fmt.Sprintf("r%05d", i) }

// seedPartition is the partition key of seeded partition i.
func seedPartition(i int) string { return fmt.Sprintf("p%d", i) }

// Seed fills partitions p0..p(parts-1), each with rows r00000.. of
// valueBytes bytes. Every shard seeds the same data; the dispatcher only
// asks each shard for its own partitions.
func (s *store) Seed(parts, rows, valueBytes int) {
	for p := range parts {
		pk := seedPartition(p)
		pt := &partition{keys: make([]string, rows), vals: make(map[string]string, rows)}
		for r := range rows {
			sk := seedKey(r)
			pt.keys[r] = sk
			pt.vals[sk] = seedValue(pk+"/"+sk, valueBytes)
		}
		s.mu.Lock()
		s.parts[pk] = pt
		s.mu.Unlock()
	}
}

func seedValue(key string, n int) string {
	if n <= 0 {
		return ""
	}
	unit := key + ";"
	return strings.Repeat(unit, n/len(unit)+1)[:n]
}

// Get returns the value of pk/sk.
func (s *store) Get(pk, sk string) (string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pt, ok := s.parts[pk]
	if !ok {
		return "", false
	}
	v, ok := pt.vals[sk]
	return v, ok
}

// Scan returns up to limit rows of pk with sort key ≥ from, in order, and
// the bytes of their values.
func (s *store) Scan(pk, from string, limit int) ([]item, int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pt, ok := s.parts[pk]
	if !ok {
		return nil, 0
	}
	i := sort.SearchStrings(pt.keys, from)
	var out []item
	n := 0
	for ; i < len(pt.keys) && len(out) < limit; i++ {
		v := pt.vals[pt.keys[i]]
		out = append(out, item{Key: pt.keys[i], Value: v})
		n += len(v)
	}
	return out, n
}

// Put writes rows into partition pk.
func (s *store) Put(pk string, items ...item) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pt, ok := s.parts[pk]
	if !ok {
		pt = &partition{vals: map[string]string{}}
		s.parts[pk] = pt
	}
	for _, it := range items {
		if _, exists := pt.vals[it.Key]; !exists {
			i := sort.SearchStrings(pt.keys, it.Key)
			pt.keys = append(pt.keys, "")
			copy(pt.keys[i+1:], pt.keys[i:])
			pt.keys[i] = it.Key
		}
		pt.vals[it.Key] = it.Value
	}
}
