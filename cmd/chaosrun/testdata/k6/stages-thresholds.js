// A stock k6 script with stages, checks, tags and thresholds (one on a
// tag of its own, one read from the environment).
import http from 'k6/http';
import { check, group, sleep } from 'k6';

export const options = {
  stages: [
    { duration: '2s', target: 4 },
    { duration: '3s', target: 4 },
    { duration: '1s', target: 0 },
  ],
  thresholds: {
    http_req_failed: ['rate<0.01'],
    http_req_duration: [`p(95)<${__ENV.P95_MS || '500'}`],
    'http_req_duration{type:health}': ['max<2000'],
    checks: ['rate>0.99'],
  },
};

export default function () {
  group('health', () => {
    const res = http.get(`${__ENV.TARGET_LEDGER}/healthz`, { tags: { type: 'health' } });
    check(res, { 'status is 200': (r) => r.status === 200 });
  });
  sleep(0.05);
}
