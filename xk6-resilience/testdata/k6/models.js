// Every model against a flaky server, with deadlines and tiers: the
// headers arrive, goodput counts successes within the deadline, the budget
// holds the retry ratio, and k6's http metrics still count every attempt.
import http from 'k6/http';
import { check } from 'k6';
import resilience from 'k6/x/resilience';

const BASE = __ENV.TARGET;

export const options = {
  scenarios: {
    backoff: { executor: 'shared-iterations', vus: 2, iterations: 60, exec: 'runBackoff', maxDuration: '60s' },
    budgeted: { executor: 'shared-iterations', vus: 1, iterations: 200, exec: 'runBudgeted', maxDuration: '60s' },
    slow: { executor: 'shared-iterations', vus: 1, iterations: 10, exec: 'runSlow', maxDuration: '60s' },
  },
  thresholds: {
    checks: ['rate==1'],
    // /flaky fails the first two attempts of a request: backoff with 3 retries gets through on the third.
    'resilience_goodput{model:backoff}': ['rate==1'],
    'resilience_amplification{model:backoff}': ['avg==3'],
    'resilience_retries{model:backoff}': ['count==120'],
    // The budget keeps retries at or under 20% of requests.
    'resilience_amplification{model:budgeted}': ['avg<=1.2', 'avg>1.05'],
    // /slow answers 200 after 300 ms: OK, but past the 100 ms deadline, so no goodput.
    'resilience_goodput{model:naive}': ['rate==0'],
    'http_reqs{scenario:backoff}': ['count==180'],
  },
};

const backoff = resilience.backoff({ retries: 3, base: '5ms', cap: '20ms', deadline: '5s', tier: 'critical' });
const budgeted = resilience.budgeted({ retries: 3, budget: 0.2, base: 0, retryOn: [500] });
const naive = resilience.naive({ deadline: '100ms', retries: 0 });

export function runBackoff() {
  const res = backoff.request((a) => http.get(`${BASE}/flaky?attempt=${a.attempt}`, { headers: a.headers, timeout: a.timeout }));
  check(res, {
    'ok after retries': (r) => r.status === 200,
    'tier header sent': (r) => r.json('criticality') === 'critical',
    'deadline header sent': (r) => { const d = Number(r.json('deadline')); return d > 0 && d <= 5000; },
  });
}

export function runBudgeted() {
  budgeted.request(() => http.get(`${BASE}/fail500`));
}

export function runSlow() {
  const res = naive.request((a) => http.get(`${BASE}/slow`, { headers: a.headers }));
  check(res, { 'slow answer arrives': (r) => r.status === 200 });
}
