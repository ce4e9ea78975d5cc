// Load for the bench: constant-arrival-rate GETs of one URL (open model),
// or, with CLOSED_VUS set, that many VUs looping (closed model).
// Environment: TARGET (URL), RATE (per second), DURATION (k6 duration),
// VUS (pre-allocated), MAX_VUS, SUMMARY (where handleSummary writes counts),
// WARMUP (open model: a k6 duration of load at RATE before the measured
// DURATION, whose drops and requests the summary leaves out; default none).
// The same script runs plain, with --out resilience=… and with --out json=….
import http from 'k6/http';

const rate = parseInt(__ENV.RATE || '1000', 10);
const duration = __ENV.DURATION || '5s';
const warmup = __ENV.WARMUP || '';

const open = {
  executor: 'constant-arrival-rate',
  rate: rate,
  timeUnit: '1s',
  duration: duration,
  preAllocatedVUs: parseInt(__ENV.VUS || '50', 10),
  maxVUs: parseInt(__ENV.MAX_VUS || '200', 10),
  gracefulStop: '3s',
};
const closed = {
  executor: 'constant-vus',
  vus: parseInt(__ENV.CLOSED_VUS || '1', 10),
  duration: duration,
  gracefulStop: '3s',
};

function scenarios() {
  if (__ENV.CLOSED_VUS) {
    return { load: closed };
  }
  if (!warmup) {
    return { load: open };
  }
  // The warm-up's VUs are reused by the measured load, which starts as the
  // warm-up ends.
  return {
    warmup: Object.assign({}, open, { duration: warmup, gracefulStop: '0s' }),
    load: Object.assign({}, open, { startTime: warmup }),
  };
}

// Sub-metrics of the measured scenario, for the summary (k6 reports
// sub-metrics only when a threshold names them; these always hold).
const measured = ['iterations', 'dropped_iterations', 'http_reqs'];

export const options = {
  discardResponseBodies: true,
  scenarios: scenarios(),
  summaryTrendStats: ['p(50)', 'p(99)', 'max'],
  thresholds: Object.assign(
    { 'http_req_failed{scenario:load}': ['rate>=0'], 'http_req_duration{scenario:load}': ['max>=0'] },
    ...measured.map((m) => ({ [`${m}{scenario:load}`]: ['count>=0'] })),
  ),
};

export default function () {
  http.get(__ENV.TARGET, { tags: { name: 'bench' }, timeout: '10s' });
}

function count(d, name) {
  const m = d.metrics[name];
  return m ? m.values.count : 0;
}

export function handleSummary(d) {
  const failed = d.metrics['http_req_failed{scenario:load}'];
  const dur = d.metrics['http_req_duration{scenario:load}'];
  return {
    [__ENV.SUMMARY]: JSON.stringify({
      iterations: count(d, 'iterations{scenario:load}'),
      dropped: count(d, 'dropped_iterations{scenario:load}'),
      reqs: count(d, 'http_reqs{scenario:load}'),
      reqs_all: count(d, 'http_reqs'),
      failed: failed ? failed.values.passes : 0,
      p50_ms: dur ? dur.values['p(50)'] : 0,
      p99_ms: dur ? dur.values['p(99)'] : 0,
      max_ms: dur ? dur.values.max : 0,
    }),
  };
}
