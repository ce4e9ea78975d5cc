// A stock k6 script with no options at all: `k6 run` would run one
// iteration; chaosrun runs it for the workload's duration, as
// `k6 run --duration` does.
import http from 'k6/http';
import { sleep } from 'k6';

export default function () {
  http.get(`${__ENV.TARGET_LEDGER}/healthz`);
  sleep(0.1);
}
