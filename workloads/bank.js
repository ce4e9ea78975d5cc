// BankService workload: open-model load on TransactCheck and TransactCash.
//
// Environment (set by chaosrun from the scenario):
//   TARGET_BANK   base URL of the bank service
//   DURATION      how long load runs (k6 duration, e.g. "60s")
//   CHECK_RATE    TransactCheck requests per second (default 100)
//   CASH_RATE     TransactCash requests per second (default 40)
//   LIST_RATE     ListTransactions requests per second (default 0)
//   LIST_PAGES    pages per ListTransactions call (default 5)
//   ACCOUNTS      number of accounts to spread load over (default 1000)
//   AMOUNT        cents per transaction (default 100)
//   TIMEOUT       per-request timeout (default "10s")
import http from 'k6/http';
import exec from 'k6/execution';
import { randomSeed } from 'k6';

const base = __ENV.TARGET_BANK;
const duration = __ENV.DURATION || '60s';
const accounts = parseInt(__ENV.ACCOUNTS || '1000', 10);
const timeout = __ENV.TIMEOUT || '10s';
const amount = parseInt(__ENV.AMOUNT || '100', 10);

function arrival(rate, exec) {
  const r = parseInt(rate, 10);
  return {
    executor: 'constant-arrival-rate',
    exec: exec,
    rate: r,
    timeUnit: '1s',
    duration: duration,
    preAllocatedVUs: Math.max(10, Math.ceil(r / 2)),
    maxVUs: Math.max(50, r * 4),
    gracefulStop: '5s',
  };
}

const scenarios = {};
for (const [name, rate, fn] of [
  ['check', __ENV.CHECK_RATE || '100', 'transactCheck'],
  ['cash', __ENV.CASH_RATE || '40', 'transactCash'],
  ['list', __ENV.LIST_RATE || '0', 'listTransactions'],
]) {
  if (parseInt(rate, 10) > 0) {
    scenarios[name] = arrival(rate, fn);
  }
}

export const options = {
  scenarios: scenarios,
  discardResponseBodies: true,
  summaryTrendStats: ['avg', 'p(50)', 'p(99)', 'max'],
};

// The run's seed makes each VU's Math.random (accounts) replayable.
const seed = parseInt(__ENV.CHAOSRUN_SEED || '1', 10);
let seeded = false;

function account() {
  if (!seeded) {
    randomSeed(seed * 7919 + exec.vu.idInTest);
    seeded = true;
  }
  return 'acct-' + Math.floor(Math.random() * accounts);
}

function key(api) {
  return `${api}-${exec.vu.idInTest}-${exec.scenario.iterationInTest}`;
}

function post(path, api) {
  const body = JSON.stringify({ account: account(), amount: amount, idempotency_key: key(api) });
  return http.post(base + path, body, {
    headers: { 'Content-Type': 'application/json' },
    tags: { api: api, name: api },
    timeout: timeout,
  });
}

export function transactCheck() {
  post('/transact/check', 'TransactCheck');
}

export function transactCash() {
  post('/transact/cash', 'TransactCash');
}

export function listTransactions() {
  const pages = __ENV.LIST_PAGES || '5';
  http.get(`${base}/transactions?account=${account()}&pages=${pages}`, {
    tags: { api: 'ListTransactions', name: 'ListTransactions' },
    timeout: timeout,
  });
}
