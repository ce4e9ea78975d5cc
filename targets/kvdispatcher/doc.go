// Package kvdispatcher is a Mussel-like key-value service: stateless
// dispatchers (`chaosrun serve kvdispatcher`) in front of partitioned storage
// shards (`chaosrun serve kvstore`).
//
// A key is "PK/SK": the partition key PK picks the shard (FNV-1a 32 of PK
// modulo the number of shards, in the order of --dep kvstore=ADDR,...), the
// sort key SK orders rows inside a partition, so a range scan reads one
// shard. Each shard has its own capacity (reads/s, bytes/s, writes/s) and
// answers 429 "throttled" beyond it.
//
// The dispatcher's quality-of-service stack, each part switchable for A/B:
//   - --ru: per-caller request-unit buckets (platform.RUBuckets, priced by
//     platform.RUWeights) instead of a plain per-request limit;
//   - --tiers: criticality tiers (X-Criticality) whose RU price rises, lowest
//     tier first, as the latency ratio (long-term p95 / short-term p95, two
//     platform.P2 estimators) falls;
//   - --hotkeys: a platform.SpaceSaving top-k finds hot keys, served from a
//     short-TTL local cache with concurrent misses coalesced;
//   - --shard-breakers: one circuit breaker per shard.
package kvdispatcher
