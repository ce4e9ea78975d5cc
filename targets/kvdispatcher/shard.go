package kvdispatcher

// shardOf returns the shard (0..n-1) of partition key pk: FNV-1a 32 of pk
// modulo n. Workload scripts compute the same to tag requests by shard.
func shardOf(pk string, n int) int {
	h := uint32(2166136261)
	for i := 0; i < len(pk); i++ {
		h ^= uint32(pk[i])
		h *= 16777619
	}
	return int(h % uint32(n))
}
