// Arrival shapes compose with k6's own executors: k6 accepts them as
// scenarios and runs them; each shape's requests are counted by scenario.
import http from 'k6/http';
import resilience from 'k6/x/resilience';

const BASE = __ENV.TARGET;
const keys = resilience.keys.zipf({ n: 1000, s: 1.1, seed: 7 });

export const options = {
  scenarios: {
    bursts: { ...resilience.shapes.bursts({ base: 5, peak: 40, every: '3s', length: '1s', rise: '500ms', duration: '6s' }), exec: 'hit' },
    step: { ...resilience.shapes.stepOverload({ capacity: 20, factor: 2, before: '1s', hold: '2s', after: '1s', rise: '500ms' }), exec: 'hit' },
    flood: { ...resilience.shapes.flood({ rate: 30, duration: '2s', startTime: '2s' }), exec: 'hit' },
  },
  thresholds: {
    // bursts: ≈ 5/s base with two 1 s bursts to 40/s over 6 s ≈ 80 requests.
    'http_reqs{scenario:bursts}': ['count>40', 'count<160'],
    // step: 10/s for 1 s, up to 40/s for 2 s, back: ≈ 110 requests.
    'http_reqs{scenario:step}': ['count>60', 'count<200'],
    'http_reqs{scenario:flood}': ['count>=50', 'count<=70'],
    http_req_failed: ['rate==0'],
  },
};

export function hit() {
  http.get(`${BASE}/ok?k=${keys.next()}`, { tags: { name: 'ok', key_class: keys.class() } });
}
