// A script that injects its own faults through Toxiproxy: traffic goes
// through a proxy; 10 s in, the proxy adds 500 ms of latency for 10 s, then
// cuts the service off for 5 s. Each change is a resilience_fault_events
// sample (tags proxy, toxic, action) next to the latency it caused.
//
//   toxiproxy-server &   # API on 127.0.0.1:8474
//   k6 run -e TOXIPROXY=http://127.0.0.1:8474 -e UPSTREAM=127.0.0.1:8080 examples/inject-faults.js
import http from 'k6/http';
import { sleep } from 'k6';
import resilience from 'k6/x/resilience';

const tp = resilience.toxiproxy(__ENV.TOXIPROXY || 'http://127.0.0.1:8474', { token: __ENV.TOXIPROXY_TOKEN });
const STEP = Number(__ENV.STEP_SECONDS || 10); // seconds per phase

export const options = {
  scenarios: {
    load: { executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', duration: `${4 * STEP}s`, preAllocatedVUs: 10, exec: 'load' },
    chaos: { executor: 'shared-iterations', vus: 1, iterations: 1, exec: 'chaos', maxDuration: `${4 * STEP}s` },
  },
};

export function setup() {
  const p = tp.createProxy({ name: 'svc', listen: '127.0.0.1:0', upstream: __ENV.UPSTREAM || '127.0.0.1:8080' });
  return { url: `http://${p.listen}` };
}

export function load(data) {
  const d = resilience.deadline('2s');
  http.get(`${data.url}/`, { headers: d.headers(), timeout: d.timeout(), tags: { name: 'svc' } });
}

export function chaos() {
  sleep(STEP);
  tp.addToxic('svc', { name: 'slow', type: 'latency', attributes: { latency: 500, jitter: 50 } });
  sleep(STEP);
  tp.removeToxic('svc', 'slow');
  tp.disable('svc');
  sleep(STEP / 2);
  tp.enable('svc');
}

export function teardown() {
  tp.deleteProxy('svc');
}
