package native

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxShards bounds a shard count: the most load processes (or Pods of an
// Indexed Job) one workload is split into.
const MaxShards = 1000

// ParseShard reads a shard as a command line writes it: "I/N", shard I
// (0-based, as a Kubernetes Job's completion index) of N.
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	idx, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want I/N, shard I (from 0) of N, e.g. 0/1 or 2/4", s)
	}
	if count < 1 || count > MaxShards || idx < 0 || idx >= count {
		return Shard{}, fmt.Errorf("shard %q: want 0 <= I < N <= %d", s, MaxShards)
	}
	return Shard{Index: idx, Count: count}, nil
}

// String writes the shard as ParseShard reads it.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, max(s.Count, 1)) }
