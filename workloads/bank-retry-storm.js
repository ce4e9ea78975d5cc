// Retry-storm and deadline workload: open-model TransactChecks at the bank,
// optionally each with a deadline the bank sees in X-Deadline-Ms.
//
// Environment (set by chaosrun from the scenario):
//   TARGET_BANK   base URL of the bank service
//   DURATION      how long load runs (k6 duration, e.g. "50s")
//   RATE          TransactCheck requests per second (default 100)
//   DEADLINE_MS   each request's deadline, sent in X-Deadline-Ms (default 0: none)
//   TIMEOUT       per-request timeout (default "5s")
//   ACCOUNTS      accounts to spread load over (default 1000)
//
// Tags: api (TransactCheck). With DEADLINE_MS set, the Rate "in_deadline"
// is the share of requests answered 200 within their deadline.
import http from 'k6/http';
import exec from 'k6/execution';
import { Rate } from 'k6/metrics';
import { randomSeed } from 'k6';

const base = __ENV.TARGET_BANK;
const duration = __ENV.DURATION || '50s';
const rate = parseInt(__ENV.RATE || '100', 10);
const deadlineMs = parseInt(__ENV.DEADLINE_MS || '0', 10);
const timeout = __ENV.TIMEOUT || '5s';
const accounts = parseInt(__ENV.ACCOUNTS || '1000', 10);

const inDeadline = new Rate('in_deadline');

export const options = {
  scenarios: {
    check: {
      executor: 'constant-arrival-rate',
      exec: 'transactCheck',
      rate: rate,
      timeUnit: '1s',
      duration: duration,
      preAllocatedVUs: Math.max(20, Math.ceil(rate / 2)),
      maxVUs: Math.max(100, rate * 6),
      gracefulStop: '5s',
    },
  },
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

export function transactCheck() {
  const headers = { 'Content-Type': 'application/json' };
  if (deadlineMs > 0) {
    headers['X-Deadline-Ms'] = String(deadlineMs);
  }
  const key = `rs-${exec.vu.idInTest}-${exec.scenario.iterationInTest}`;
  const res = http.post(`${base}/transact/check`, JSON.stringify({ account: account(), amount: 100, idempotency_key: key }), {
    headers: headers,
    tags: { api: 'TransactCheck', name: 'TransactCheck' },
    timeout: timeout,
  });
  if (deadlineMs > 0) {
    inDeadline.add(res.status === 200 && res.timings.duration <= deadlineMs, { api: 'TransactCheck' });
  }
}
