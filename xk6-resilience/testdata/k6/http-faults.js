// HTTP-aware faults from the script, on chaosrun's proxy server (`chaosrun
// serve toxiproxy --http-stage`): http_error answers matched requests itself,
// http_latency holds them; unmatched requests pass untouched.
import http from 'k6/http';
import { check } from 'k6';
import resilience from 'k6/x/resilience';

const tp = resilience.toxiproxy(__ENV.TOXIPROXY);

export const options = {
  scenarios: { faults: { executor: 'shared-iterations', vus: 1, iterations: 1, maxDuration: '60s' } },
  thresholds: {
    checks: ['rate==1'],
    'resilience_fault_events{action:add_toxic}': ['count==2'],
  },
};

export function setup() {
  const p = tp.createProxy({ name: 'api', listen: '127.0.0.1:0', upstream: __ENV.UPSTREAM });
  return { url: `http://${p.listen}` };
}

export default function (data) {
  const get = (path) => http.get(`${data.url}${path}`, { timeout: '5s' });
  check(get('/cash/1'), { 'before the fault: 200': (r) => r.status === 200 });

  tp.addToxic('api', {
    name: 'cash-503', type: 'http_error', toxicity: 1,
    attributes: { status: 503, retry_after: 2, method: 'GET', path: '/cash/*' },
  });
  check(get('/cash/1'), {
    'matched: 503 from the stage': (r) => r.status === 503,
    'with Retry-After': (r) => r.headers['Retry-After'] === '2',
  });
  check(get('/check/1'), { 'unmatched: 200': (r) => r.status === 200 });

  tp.addToxic('api', { name: 'slow-check', type: 'http_latency', attributes: { latency: 300, path: '/check/*' } });
  check(get('/check/1'), { 'matched: held 300 ms': (r) => r.status === 200 && r.timings.duration >= 280 });
  check(get('/ok'), { 'unmatched: not held': (r) => r.status === 200 && r.timings.duration < 250 });

  tp.removeToxic('api', 'cash-503');
  tp.removeToxic('api', 'slow-check');
  check(get('/cash/1'), { 'after removal: 200': (r) => r.status === 200 });
}

export function teardown() {
  tp.deleteProxy('api');
}
