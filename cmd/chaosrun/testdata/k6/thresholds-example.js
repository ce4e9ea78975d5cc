// k6's thresholds example as teams copy it: one VU in a loop (k6's
// default closed model), thresholds on failures and p(95).
import http from 'k6/http';

export const options = {
  vus: 1,
  duration: '12s',
  thresholds: {
    http_req_failed: ['rate<0.01'],
    http_req_duration: ['p(95)<200'],
  },
};

export default function () {
  http.get(`${__ENV.TARGET_ORIGIN}/`);
}
