// Load for the bench: constant-arrival-rate GETs of one URL (open model),
// or, with CLOSED_VUS set, that many VUs looping (closed model).
// Environment: TARGET (URL), RATE (per second), DURATION (k6 duration),
// VUS (pre-allocated), MAX_VUS, SUMMARY (where handleSummary writes counts).
// The same script runs plain, with --out resilience=… and with --out json=….
import http from 'k6/http';

const rate = parseInt(__ENV.RATE || '1000', 10);
const duration = __ENV.DURATION || '5s';

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

export const options = {
  discardResponseBodies: true,
  scenarios: { load: __ENV.CLOSED_VUS ? closed : open },
  summaryTrendStats: ['p(50)', 'p(99)', 'max'],
};

export default function () {
  http.get(__ENV.TARGET, { tags: { name: 'bench' }, timeout: '10s' });
}

function count(d, name) {
  const m = d.metrics[name];
  return m ? m.values.count : 0;
}

export function handleSummary(d) {
  const failed = d.metrics.http_req_failed;
  const dur = d.metrics.http_req_duration;
  return {
    [__ENV.SUMMARY]: JSON.stringify({
      iterations: count(d, 'iterations'),
      dropped: count(d, 'dropped_iterations'),
      reqs: count(d, 'http_reqs'),
      failed: failed ? failed.values.passes : 0,
      p50_ms: dur ? dur.values['p(50)'] : 0,
      p99_ms: dur ? dur.values['p(99)'] : 0,
      max_ms: dur ? dur.values.max : 0,
    }),
  };
}
