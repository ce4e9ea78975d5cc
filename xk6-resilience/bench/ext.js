// k6 + xk6-resilience: every request goes through the smart client (its
// decisions and seven metric samples per request) with a Zipf key stream,
// a deadline and a tier header. Compare its throughput with plain.js.
import http from 'k6/http';
import resilience from 'k6/x/resilience';

const BASE = __ENV.TARGET;
const keys = resilience.keys.zipf({ n: 100000, s: 0.99 });
const client = resilience.smart({ deadline: '2s', tier: 'critical' });

export const options = {
  scenarios: {
    load: { executor: 'shared-iterations', vus: Number(__ENV.VUS || 4), iterations: Number(__ENV.ITERATIONS || 20000), maxDuration: '2m' },
  },
};

// Defined once; request passes the key through: request(fn, ...args) calls fn(attempt, ...args).
function get(a, k) {
  return http.get(`${BASE}/ok?k=${k}`, { headers: a.headers, tags: { name: 'ok' } });
}

export default function () {
  client.request(get, keys.next());
}

export function handleSummary(d) {
  return { [__ENV.SUMMARY]: JSON.stringify({ iterations: d.metrics.iterations.values.count, reqs: d.metrics.http_reqs.values.count }) };
}
