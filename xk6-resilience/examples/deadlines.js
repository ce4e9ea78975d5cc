// Deadlines and tiers without a client model: the service learns how long
// the caller will wait (X-Deadline-Ms) and how much the call matters
// (X-Criticality), and k6 stops waiting when the deadline passes.
//
//   k6 run -e TARGET=http://127.0.0.1:8080 examples/deadlines.js
import http from 'k6/http';
import { check } from 'k6';
import resilience from 'k6/x/resilience';

const TARGET = __ENV.TARGET || 'http://127.0.0.1:8080';

// Services that read other header names:
// resilience.headerNames({ deadline: 'Request-Timeout-Ms', criticality: 'Priority' });

export const options = { vus: 2, duration: __ENV.DURATION || '10s' };

export default function () {
  const d = resilience.deadline('800ms', { tier: 'critical' });
  const res = http.get(`${TARGET}/`, { headers: d.headers(), timeout: d.timeout() });
  check(res, { 'answered within the deadline': (r) => r.status === 200 && !d.expired() });
  // A background call that may be shed first:
  http.get(`${TARGET}/`, { headers: resilience.criticality('sheddable'), tags: { tier: 'sheddable' } });
}
