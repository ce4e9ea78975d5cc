// kvdispatcher workload: open-model load on a dispatcher fleet in front of
// partitioned kvstore shards. Every part is off unless its rate is set.
//
// Environment (set by chaosrun from the scenario):
//   TARGET_KVDISPATCHER   base URL of the first dispatcher
//   TARGETS_KVDISPATCHER  base URLs of every dispatcher, comma-separated
//                         (when the harness sets it; load is spread over them)
//   DURATION              how long load runs (k6 duration, e.g. "60s")
//   SHARDS                number of kvstore shards (for the shard tag)
//   PARTITIONS, ROWS      the seeded key space: p0..p(P-1) / r00000..
//   POINT_RATE            point reads per second per reader (default 0)
//   POINT_CALLERS         number of readers reader-0.. (default 3)
//   POINT_TIER            their X-Criticality (default "default")
//   SCAN_RATE             range scans per second by caller "scanner"
//   SCAN_LIMIT            rows per scan (default 100)
//   CRIT_RATE, DEFAULT_RATE, SHED_RATE
//                         point reads per second by callers "svc-critical",
//                         "svc-default", "svc-sheddable" in those tiers
//   FLOOD_RATE            reads per second of FLOOD_KEY by caller "bot"
//   FLOOD_KEY             the flooded key (default "p7/r00001")
//   FLOOD_START           when the flood starts (default "0s")
//   FLOOD_DURATION        how long it lasts (default DURATION)
//   HOT_SHARD_RATE        reads per second by caller "hot" of keys on shard 0 only
//   FAULT_SHARD           point reads of keys on this shard are tagged
//                         key_class "faulty-shard" instead of "other"
//   TIMEOUT               per-request timeout (default "5s")
//
// Tags: api (Get, Scan, Flood), caller, tier, shard, key_class (hot: the
// flood key; faulty-shard: keys on FAULT_SHARD; hotshard: the hot-shard
// caller's keys; other: the rest). Counters kv_backend_reads, kv_cache_hits and
// kv_coalesced count successful reads by the dispatcher's X-Served-By answer.
import http from 'k6/http';
import exec from 'k6/execution';
import { Counter } from 'k6/metrics';
import { randomSeed } from 'k6';

const targets = (__ENV.TARGETS_KVDISPATCHER || __ENV.TARGET_KVDISPATCHER || '').split(',').filter((s) => s);
const duration = __ENV.DURATION || '60s';
const shards = parseInt(__ENV.SHARDS || '4', 10);
const partitions = parseInt(__ENV.PARTITIONS || '200', 10);
const rows = parseInt(__ENV.ROWS || '200', 10);
const timeout = __ENV.TIMEOUT || '5s';
const floodKey = __ENV.FLOOD_KEY || 'p7/r00001';
const scanLimit = __ENV.SCAN_LIMIT || '100';
const pointCallers = parseInt(__ENV.POINT_CALLERS || '3', 10);
const faultShard = parseInt(__ENV.FAULT_SHARD || '-1', 10);

const backendReads = new Counter('kv_backend_reads');
const cacheHits = new Counter('kv_cache_hits');
const coalesced = new Counter('kv_coalesced');

function arrival(rate, fn, env, startTime, dur) {
  const r = parseFloat(rate);
  return {
    executor: 'constant-arrival-rate',
    exec: fn,
    rate: Math.round(r),
    timeUnit: '1s',
    duration: dur || duration,
    startTime: startTime || '0s',
    preAllocatedVUs: Math.max(5, Math.ceil(r / 4)),
    maxVUs: Math.max(20, Math.ceil(r * 2)),
    gracefulStop: '5s',
    env: env || {},
  };
}

const scenarios = {};
function add(name, rate, fn, env, startTime, dur) {
  if (rate && parseFloat(rate) > 0) {
    scenarios[name] = arrival(rate, fn, env, startTime, dur);
  }
}
for (let i = 0; i < pointCallers; i++) {
  add(`reader${i}`, __ENV.POINT_RATE, 'point', { CALLER: `reader-${i}`, TIER: __ENV.POINT_TIER || 'default' });
}
add('scanner', __ENV.SCAN_RATE, 'scan', { CALLER: 'scanner', TIER: 'default' });
add('critical', __ENV.CRIT_RATE, 'point', { CALLER: 'svc-critical', TIER: 'critical' });
add('default', __ENV.DEFAULT_RATE, 'point', { CALLER: 'svc-default', TIER: 'default' });
add('sheddable', __ENV.SHED_RATE, 'point', { CALLER: 'svc-sheddable', TIER: 'sheddable' });
add('flood', __ENV.FLOOD_RATE, 'flood', { CALLER: 'bot', TIER: 'default' }, __ENV.FLOOD_START, __ENV.FLOOD_DURATION);
add('hotshard', __ENV.HOT_SHARD_RATE, 'hotShard', { CALLER: 'hot', TIER: 'default' });

export const options = {
  scenarios: scenarios,
  summaryTrendStats: ['avg', 'p(50)', 'p(99)', 'max'],
};

// shardOf is the dispatcher's routing: FNV-1a 32 of the partition key mod SHARDS.
export function shardOf(pk) {
  let h = 0x811c9dc5;
  for (let i = 0; i < pk.length; i++) {
    h ^= pk.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % shards;
}

const seed = parseInt(__ENV.CHAOSRUN_SEED || '1', 10);
let seeded = false;
function rnd(n) {
  if (!seeded) {
    randomSeed(seed * 7919 + exec.vu.idInTest);
    seeded = true;
  }
  return Math.floor(Math.random() * n);
}

function base() {
  return targets[exec.scenario.iterationInTest % targets.length];
}

function pad(n) {
  return ('00000' + n).slice(-5);
}

// Partitions on shard 0, for the hot-shard caller.
const shard0 = [];
for (let p = 0; p < partitions; p++) {
  if (shardOf('p' + p) === 0) shard0.push('p' + p);
}

function read(pk, sk, api, keyClass) {
  const res = http.get(`${base()}/kv/${pk}/${sk}`, {
    headers: { 'X-Caller': __ENV.CALLER, 'X-Criticality': __ENV.TIER },
    tags: { api: api, name: api, caller: __ENV.CALLER, tier: __ENV.TIER, shard: String(shardOf(pk)), key_class: keyClass },
    timeout: timeout,
    responseType: 'none',
  });
  if (res.status === 200) {
    const tags = { key_class: keyClass };
    const by = res.headers['X-Served-By'];
    if (by === 'backend') backendReads.add(1, tags);
    else if (by === 'cache') cacheHits.add(1, tags);
    else if (by === 'coalesced') coalesced.add(1, tags);
  }
  return res;
}

export function point() {
  let pk = 'p' + rnd(partitions);
  let sk = 'r' + pad(rnd(rows));
  if (pk + '/' + sk === floodKey) sk = 'r' + pad((rnd(rows - 1) + 2) % rows);
  read(pk, sk, 'Get', shardOf(pk) === faultShard ? 'faulty-shard' : 'other');
}

export function hotShard() {
  read(shard0[rnd(shard0.length)], 'r' + pad(rnd(rows)), 'Get', 'hotshard');
}

export function flood() {
  const [pk, sk] = floodKey.split('/');
  read(pk, sk, 'Flood', 'hot');
}

export function scan() {
  const pk = 'p' + rnd(partitions);
  http.get(`${base()}/scan/${pk}?limit=${scanLimit}`, {
    headers: { 'X-Caller': __ENV.CALLER, 'X-Criticality': __ENV.TIER },
    tags: { api: 'Scan', name: 'Scan', caller: __ENV.CALLER, tier: __ENV.TIER, shard: String(shardOf(pk)) },
    timeout: timeout,
    responseType: 'none',
  });
}
