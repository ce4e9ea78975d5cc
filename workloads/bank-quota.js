// Quota workload: well-behaved callers and one rogue caller on TransactCheck,
// each naming itself in X-Caller.
//
// Environment (set by chaosrun from the scenario):
//   TARGET_BANK   base URL of the bank service
//   DURATION      how long load runs (k6 duration, e.g. "30s")
//   CALLERS       number of well-behaved callers caller-0.. (default 3)
//   CALLER_RATE   requests per second of each of them (default 30)
//   ROGUE_RATE    requests per second of caller "rogue" (default 200)
//   ACCOUNTS      accounts to spread load over (default 1000)
//   TIMEOUT       per-request timeout (default "5s")
//
// Tags: api (TransactCheck), caller (caller-N or rogue).
import http from 'k6/http';
import exec from 'k6/execution';
import { randomSeed } from 'k6';

const base = __ENV.TARGET_BANK;
const duration = __ENV.DURATION || '30s';
const callers = parseInt(__ENV.CALLERS || '3', 10);
const accounts = parseInt(__ENV.ACCOUNTS || '1000', 10);
const timeout = __ENV.TIMEOUT || '5s';

function arrival(rate, caller) {
  const r = parseInt(rate, 10);
  return {
    executor: 'constant-arrival-rate',
    exec: 'transactCheck',
    rate: r,
    timeUnit: '1s',
    duration: duration,
    preAllocatedVUs: Math.max(10, Math.ceil(r / 2)),
    maxVUs: Math.max(50, r * 4),
    gracefulStop: '5s',
    env: { CALLER: caller },
  };
}

const scenarios = {};
for (let i = 0; i < callers; i++) {
  scenarios[`caller${i}`] = arrival(__ENV.CALLER_RATE || '30', `caller-${i}`);
}
if (parseInt(__ENV.ROGUE_RATE || '200', 10) > 0) {
  scenarios.rogue = arrival(__ENV.ROGUE_RATE || '200', 'rogue');
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

export function transactCheck() {
  const caller = __ENV.CALLER;
  const key = `q-${caller}-${exec.vu.idInTest}-${exec.scenario.iterationInTest}`;
  http.post(`${base}/transact/check`, JSON.stringify({ account: account(), amount: 100, idempotency_key: key }), {
    headers: { 'Content-Type': 'application/json', 'X-Caller': caller },
    tags: { api: 'TransactCheck', name: 'TransactCheck', caller: caller },
    timeout: timeout,
  });
}
