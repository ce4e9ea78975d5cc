// A script whose own options run one iteration: load ends long before the
// scenario's planned duration.
import http from 'k6/http';

export const options = { iterations: 1 };

export default function () {
  http.get(`${__ENV.TARGET_LEDGER}/healthz`);
}
