// Plain k6: the baseline of the overhead benchmark. Same requests and key
// choice as ext.js (same headers: a deadline and a tier), with Math.random
// and Date.now instead of the extension.
import http from 'k6/http';

const BASE = __ENV.TARGET;

export const options = {
  scenarios: {
    load: { executor: 'shared-iterations', vus: Number(__ENV.VUS || 4), iterations: Number(__ENV.ITERATIONS || 20000), maxDuration: '2m' },
  },
};

export default function () {
  const k = 'key-' + Math.floor(Math.random() * 100000);
  const deadline = Date.now() + 2000;
  http.get(`${BASE}/ok?k=${k}`, {
    headers: { 'X-Deadline-Ms': String(deadline - Date.now()), 'X-Criticality': 'critical' },
    tags: { name: 'ok' },
  });
}

export function handleSummary(d) {
  return { [__ENV.SUMMARY]: JSON.stringify({ iterations: d.metrics.iterations.values.count, reqs: d.metrics.http_reqs.values.count }) };
}
