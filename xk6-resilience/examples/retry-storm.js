// Retry storm: the same bursty open-model load through a naive and a smart
// client. Against a service that sheds load (503 + X-Backpressure: 1 or
// Retry-After), compare resilience_amplification{model:naive} with
// {model:smart}, and goodput, in the end-of-test summary.
//
//   k6 run -e TARGET=http://127.0.0.1:8080 -e PATH_=/api/work examples/retry-storm.js
import http from 'k6/http';
import resilience from 'k6/x/resilience';

const TARGET = __ENV.TARGET || 'http://127.0.0.1:8080';
const PATH = __ENV.PATH_ || '/';
const DURATION = __ENV.DURATION || '60s';
const shape = { base: 20, peak: 200, every: __ENV.EVERY || '20s', length: __ENV.LENGTH || '5s', duration: DURATION };

export const options = {
  scenarios: {
    naive: { ...resilience.shapes.bursts(shape), exec: 'viaNaive' },
    smart: { ...resilience.shapes.bursts(shape), exec: 'viaSmart' },
  },
  thresholds: {
    'resilience_amplification{model:smart}': ['avg<1.2'],
    'resilience_goodput{model:smart}': ['rate>0.5'],
  },
};

const naive = resilience.naive({ retries: 3, deadline: '2s' });
const smart = resilience.smart({ retries: 3, deadline: '2s', budget: 0.1 });

function call(a) {
  return http.get(`${TARGET}${PATH}`, { headers: a.headers, timeout: a.timeout, tags: { name: 'work' } });
}

export function viaNaive() {
  naive.request(call);
}

export function viaSmart() {
  smart.request(call);
}
