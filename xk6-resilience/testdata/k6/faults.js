// Fault control from the script: a proxy in front of the test server, a
// latency toxic added, updated and removed, the proxy disabled and enabled.
// Every change is a resilience_fault_events sample tagged proxy/toxic/action.
import http from 'k6/http';
import { check } from 'k6';
import resilience from 'k6/x/resilience';

const tp = resilience.toxiproxy(__ENV.TOXIPROXY, { token: __ENV.TOXIPROXY_TOKEN });

export const options = {
  scenarios: { faults: { executor: 'shared-iterations', vus: 1, iterations: 1, maxDuration: '60s' } },
  thresholds: {
    checks: ['rate==1'],
    resilience_fault_events: ['count==7'],
    'resilience_fault_events{action:add_toxic}': ['count==1'],
    'resilience_fault_events{toxic:slow}': ['count==3'],
    'resilience_fault_events{proxy:api}': ['count==7'],
  },
};

export function setup() {
  const p = tp.createProxy({ name: 'api', listen: '127.0.0.1:0', upstream: __ENV.UPSTREAM });
  return { url: `http://${p.listen}` };
}

export default function (data) {
  const get = () => http.get(`${data.url}/ok`, { timeout: '5s' });
  check(get(), { 'through the proxy': (r) => r.status === 200 });
  tp.addToxic('api', { name: 'slow', type: 'latency', attributes: { latency: 300 } });
  check(get(), { 'latency toxic slows': (r) => r.timings.duration >= 280 });
  tp.updateToxic('api', 'slow', { attributes: { latency: 600 } });
  check(get(), { 'updated toxic slows more': (r) => r.timings.duration >= 580 });
  const listed = tp.proxy('api');
  check(listed, { 'toxic listed': (p) => p.toxics.length === 1 && p.toxics[0].attributes.latency === 600 });
  tp.removeToxic('api', 'slow');
  check(get(), { 'removed toxic is gone': (r) => r.status === 200 && r.timings.duration < 280 });
  tp.disable('api');
  check(get(), { 'disabled proxy refuses': (r) => r.status === 0 });
  tp.enable('api');
  check(get(), { 'enabled again': (r) => r.status === 200 });
}

export function teardown() {
  tp.deleteProxy('api');
}
