// Package kvdispatcher is a Mussel-like key-value service: stateless
// dispatchers (`chaosrun serve kvdispatcher`) in front of partitioned storage
// shards (`chaosrun serve kvstore`).
//
// A key is "PK/SK": the partition key PK picks the shard (FNV-1a 32 of PK
// modulo the number of shards, in the order of --dep kvstore=ADDR,...), the
// sort key SK orders rows inside a partition, so a range scan reads one
// shard. Each shard has its own capacity (reads/s, bytes/s, writes/s) and
// answers 429 "throttled" beyond it, whatever the other shards do.
//
// Both serve the same routes: GET /kv/{pk}/{sk}, PUT /kv/{pk}/{sk} with
// {"value": …}, GET /scan/{pk}?from=SK&limit=N and POST /bulk/{pk} with
// {"items": [{"key", "value"}…]}. The dispatcher reads the caller from
// X-Caller and the tier from X-Criticality (critical, default, sheddable),
// and says in X-Served-By where a read came from (backend, cache,
// coalesced) and in X-Shard which shard holds the key.
//
// The dispatcher's quality-of-service stack, each part switchable for A/B:
//   - --ru: per-caller request-unit buckets (server.RUBuckets, priced by
//     server.RUWeights: the size read or written and the backend latency,
//     charged after the answer) instead of a plain per-request limit;
//   - --tiers: criticality tiers whose RU price rises 50-fold, sheddable
//     tier first, then default, as the latency ratio (long-term p95 /
//     short-term p95 of shard reads, two stats.P2 estimators) falls;
//   - --hotkeys: a stats.SpaceSaving top-k finds hot keys, served from a
//     short-TTL local cache (expirable LRU) with concurrent misses coalesced
//     (singleflight, detached from any one caller);
//   - --shard-breakers: one platform smart client, so one circuit breaker,
//     per shard: a slow or failing shard fails only its own keys.
//
// The scenarios scenarios/kv-*.yaml prove each claim with its A/B switch.
package kvdispatcher
