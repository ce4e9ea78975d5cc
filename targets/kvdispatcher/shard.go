package kvdispatcher

import "strings"

// ShardOf returns the shard (0..n-1) of partition key pk: FNV-1a 32 of pk
// modulo n. Workload scripts compute the same to tag requests by shard.
func ShardOf(pk string, n int) int {
	h := uint32(2166136261)
	for i := 0; i < len(pk); i++ {
		h ^= uint32(pk[i])
		h *= 16777619
	}
	return int(h % uint32(n))
}

// SplitKey splits "PK/SK" into its parts; ok is false unless both are
// non-empty and PK holds no slash.
func SplitKey(key string) (pk, sk string, ok bool) {
	pk, sk, ok = strings.Cut(key, "/")
	return pk, sk, ok && pk != "" && sk != ""
}
