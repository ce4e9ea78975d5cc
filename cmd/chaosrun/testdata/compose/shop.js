// Shop workload: open-model GET /item load on a service that reads
// through a Redis cache.
//
// Environment (set by chaosrun from the scenario):
//   TARGET_APP  base URL of the shop app
//   DURATION      how long load runs (k6 duration, e.g. "60s")
//   RATE          GET /item requests per second (default 100)
//   KEYS          number of distinct keys (default 200)
//   TIMEOUT       per-request timeout (default "10s")
import http from 'k6/http';
import exec from 'k6/execution';
import { randomSeed } from 'k6';

const base = __ENV.TARGET_APP;
const rate = parseInt(__ENV.RATE || '100', 10);
const keys = parseInt(__ENV.KEYS || '200', 10);
const timeout = __ENV.TIMEOUT || '10s';

export const options = {
  scenarios: {
    get: {
      executor: 'constant-arrival-rate',
      exec: 'getItem',
      rate: rate,
      timeUnit: '1s',
      duration: __ENV.DURATION || '60s',
      preAllocatedVUs: Math.max(10, Math.ceil(rate / 2)),
      maxVUs: Math.max(50, rate * 4),
      gracefulStop: '5s',
    },
  },
  discardResponseBodies: true,
  summaryTrendStats: ['avg', 'p(50)', 'p(99)', 'max'],
};

// The run's seed makes each VU's Math.random (keys) replayable.
const seed = parseInt(__ENV.CHAOSRUN_SEED || '1', 10);
let seeded = false;

export function getItem() {
  if (!seeded) {
    randomSeed(seed * 7919 + exec.vu.idInTest);
    seeded = true;
  }
  const key = 'k' + Math.floor(Math.random() * keys);
  http.get(`${base}/item?key=${key}`, {
    tags: { api: 'GetItem', name: 'GetItem' },
    timeout: timeout,
  });
}
