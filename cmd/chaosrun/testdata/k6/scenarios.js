// A stock k6 script with scenarios of two executors and thresholds on
// each scenario's samples.
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: {
    arrivals: {
      executor: 'constant-arrival-rate', exec: 'arrivals',
      rate: 20, timeUnit: '1s', duration: '6s', preAllocatedVUs: 5,
    },
    ramp: {
      executor: 'ramping-vus', exec: 'ramp', startTime: '1s',
      stages: [{ duration: '2s', target: 2 }, { duration: '3s', target: 0 }],
    },
  },
  thresholds: {
    'http_reqs{scenario:arrivals}': ['count>=100'],
    'http_req_duration{scenario:ramp}': ['p(99)<1000', 'med<500'],
  },
};

export function arrivals() {
  http.get(`${__ENV.TARGET_LEDGER}/healthz`);
}

export function ramp() {
  http.get(`${__ENV.TARGET_LEDGER}/healthz`);
  sleep(0.1);
}
