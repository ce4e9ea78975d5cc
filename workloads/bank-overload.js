// Overload workload: open-model reads straight at one platform service (the
// ledger), each with a deadline, counting goodput: answers that came back 200
// within the request's deadline.
//
// Environment (set by chaosrun from the scenario):
//   TARGET_LEDGER  base URL of the service under load
//   DURATION       how long load runs (k6 duration, e.g. "40s")
//   RATE           requests per second offered (default 300)
//   DEADLINE_MS    each request's deadline, sent in X-Deadline-Ms (default 250)
//   ACCOUNTS       accounts to spread reads over (default 1000)
//   MODE           "open" (default): RATE/s, open model; "capacity": a closed
//                  loop of VUS virtual users without deadlines, to measure the
//                  service's capacity (its http_reqs rate is the capacity)
//   VUS            virtual users in capacity mode (default 16)
//
// Metrics (tag api:Read): goodput (Rate: the share of requests answered 200
// within their deadline) and good_reqs (Counter: those requests; its rate per
// second is the goodput in requests per second).
import http from 'k6/http';
import exec from 'k6/execution';
import { Counter, Rate } from 'k6/metrics';
import { randomSeed } from 'k6';

const base = __ENV.TARGET_LEDGER;
const duration = __ENV.DURATION || '40s';
const rate = parseInt(__ENV.RATE || '300', 10);
const deadlineMs = parseInt(__ENV.DEADLINE_MS || '250', 10);
const accounts = parseInt(__ENV.ACCOUNTS || '1000', 10);
const mode = __ENV.MODE || 'open';
const vus = parseInt(__ENV.VUS || '16', 10);

const goodput = new Rate('goodput');
const goodReqs = new Counter('good_reqs');

const scenarios = {};
if (mode === 'capacity') {
  scenarios.capacity = { executor: 'constant-vus', exec: 'read', vus: vus, duration: duration, gracefulStop: '5s' };
} else if (mode === 'open') {
  scenarios.read = {
    executor: 'constant-arrival-rate',
    exec: 'read',
    rate: rate,
    timeUnit: '1s',
    duration: duration,
    preAllocatedVUs: Math.max(20, Math.ceil((rate * 2 * deadlineMs) / 1000)),
    maxVUs: Math.max(50, Math.ceil((rate * 4 * deadlineMs) / 1000)),
    gracefulStop: '5s',
  };
} else {
  throw new Error(`MODE ${mode}: want open or capacity`);
}

export const options = {
  scenarios: scenarios,
  discardResponseBodies: true,
  summaryTrendStats: ['avg', 'p(50)', 'p(99)', 'max'],
};

const seed = parseInt(__ENV.CHAOSRUN_SEED || '1', 10);
let seeded = false;

function account() {
  if (!seeded) {
    randomSeed(seed * 7919 + exec.vu.idInTest);
    seeded = true;
  }
  return 'acct-' + Math.floor(Math.random() * accounts);
}

export function read() {
  const params = { tags: { api: 'Read', name: 'Read' } };
  if (mode === 'open') {
    // The service sees the deadline; k6 waits twice as long so that late
    // answers are seen as late (not as client timeouts).
    params.headers = { 'X-Deadline-Ms': String(deadlineMs) };
    params.timeout = `${2 * deadlineMs}ms`;
  } else {
    params.timeout = '10s';
  }
  const res = http.get(`${base}/ledger/transactions?account=${account()}`, params);
  const good = res.status === 200 && (mode !== 'open' || res.timings.duration <= deadlineMs);
  goodput.add(good, { api: 'Read' });
  goodReqs.add(good ? 1 : 0, { api: 'Read' }); // a 0 keeps the series present when nothing is good
}
