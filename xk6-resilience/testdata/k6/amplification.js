// Amplification against a server that always answers back pressure
// (503 + X-Backpressure: 1). Thresholds fail when a model misbehaves:
// the smart client must not retry (≤ 1.05 attempts per request), the naive
// one with 3 retries must (≥ 3.5). BROKEN=1 misconfigures both on purpose
// (smart does not recognise the signal, naive does not retry): every
// threshold on amplification must then fail.
import http from 'k6/http';
import resilience from 'k6/x/resilience';

const BASE = __ENV.TARGET;
const broken = __ENV.BROKEN === '1';

export const options = {
  scenarios: {
    naive: { executor: 'shared-iterations', vus: 2, iterations: 100, exec: 'runNaive', maxDuration: '60s' },
    smart: { executor: 'shared-iterations', vus: 2, iterations: 100, exec: 'runSmart', maxDuration: '60s' },
  },
  thresholds: {
    'resilience_amplification{model:smart}': ['avg<=1.05'],
    'resilience_amplification{model:naive}': ['avg>=3.5'],
    'resilience_backpressure{model:naive}': ['count>=100'],
    'resilience_giveups{model:naive}': ['count==100'],
    'resilience_goodput{model:smart}': ['rate==0'],
    // k6's own metrics stay intact: every attempt is an http request.
    'http_reqs{scenario:naive}': [broken ? 'count>=100' : 'count>=350'],
  },
};

const naive = resilience.naive({ retries: broken ? 0 : 3 });
const smart = resilience.smart(broken
  ? { backpressure: { header: 'X-Not-Sent', retryAfter: false }, budget: 10, base: 1, cap: 5, breaker: { failures: 100000 } }
  : {});

export function runNaive() {
  naive.request(() => http.get(`${BASE}/bp`, { tags: { name: 'bp' } }));
}

export function runSmart() {
  smart.request(() => http.get(`${BASE}/bp`, { tags: { name: 'bp' } }));
}
