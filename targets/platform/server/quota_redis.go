package server

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// gcraScript is the generic cell rate algorithm, atomically in Redis, on
// Redis's own clock (so replicas' clocks do not matter). KEYS[1]: the caller's
// key. ARGV: rate per second, burst. Answers {allowed 0|1, retry-after µs}.
const gcraScript = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local emission = 1000000 / rate
local tolerance = emission * burst
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then tat = now end
local newtat = tat + emission
local wait = newtat - now - tolerance
if wait > 0 then
  return {0, math.ceil(wait)}
end
redis.call('SET', KEYS[1], string.format('%d', math.floor(newtat)), 'PX', math.ceil((newtat - now) / 1000) + 1000)
return {1, 0}
`

// redisQuotaPrefix starts the Redis key of every caller's counter.
const redisQuotaPrefix = "chaosrun:quota:"

// redisQuota is a QuotaCounter shared by every replica using the same Redis:
// GCRA in a Lua script.
type redisQuota struct {
	addr   string
	client *redis.Client
	script *redis.Script
	// Timeout bounds each call to Redis.
	Timeout time.Duration
}

// newRedisQuota returns a counter on the Redis at addr (host:port). It does not connect yet.
func newRedisQuota(addr string) *redisQuota {
	return &redisQuota{
		addr:    addr,
		client:  redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second}),
		script:  redis.NewScript(gcraScript),
		Timeout: 250 * time.Millisecond,
	}
}

// ping checks Redis answers.
func (q *redisQuota) ping(ctx context.Context) error {
	if err := q.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("quota redis %s: %w", q.addr, err)
	}
	return nil
}

// close closes the connections.
func (q *redisQuota) close() error { return q.client.Close() }

// take implements QuotaCounter.
func (q *redisQuota) take(ctx context.Context, caller string, r float64, burst int) (bool, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, q.Timeout)
	defer cancel()
	res, err := q.script.Run(ctx, q.client, []string{redisQuotaPrefix + caller}, r, burst).Int64Slice()
	if err != nil {
		return false, 0, fmt.Errorf("quota redis %s: %w", q.addr, err)
	}
	if len(res) != 2 {
		return false, 0, fmt.Errorf("quota redis %s: script answered %v, want [allowed, retry-µs]", q.addr, res)
	}
	return res[0] == 1, time.Duration(res[1]) * time.Microsecond, nil
}
