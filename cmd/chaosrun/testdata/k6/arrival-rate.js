// A k6 script that sends on a schedule (an open model): fifty requests a
// second whatever the latency, with VUs enough for slow responses.
import http from 'k6/http';

export const options = {
  scenarios: {
    steady: {
      executor: 'constant-arrival-rate',
      rate: 50,
      timeUnit: '1s',
      duration: __ENV.DURATION || '12s',
      preAllocatedVUs: 50,
      maxVUs: 100,
    },
  },
};

export default function () {
  http.get(`${__ENV.TARGET_ORIGIN}/healthz`);
}
