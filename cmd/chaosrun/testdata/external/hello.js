// Open-model GET /hello load on one service (TARGET_API).
//   DURATION  how long load runs (default 15s)
//   RATE      requests per second (default 50)
import http from 'k6/http';

const base = __ENV.TARGET_API;
const rate = parseInt(__ENV.RATE || '50', 10);

export const options = {
  scenarios: {
    hello: {
      executor: 'constant-arrival-rate',
      rate: rate,
      timeUnit: '1s',
      duration: __ENV.DURATION || '15s',
      preAllocatedVUs: 20,
      maxVUs: 200,
      gracefulStop: '5s',
    },
  },
  discardResponseBodies: true,
};

export default function () {
  http.get(`${base}/hello`, { tags: { api: 'Hello', name: 'Hello' }, timeout: '5s' });
}
