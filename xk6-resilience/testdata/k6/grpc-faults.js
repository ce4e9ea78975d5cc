// gRPC faults from the script, on chaosrun's proxy server (`chaosrun serve
// toxiproxy --http-stage`): grpc_error answers one method's calls with a
// status, grpc_latency holds them; the other method, on the same
// connection, passes untouched. UPSTREAM is a gRPC server with reflection
// (grpc-go's example: Greeter and Echo).
import grpc from 'k6/net/grpc';
import { check } from 'k6';
import resilience from 'k6/x/resilience';

const tp = resilience.toxiproxy(__ENV.TOXIPROXY);
const client = new grpc.Client();

export const options = {
  scenarios: { faults: { executor: 'shared-iterations', vus: 1, iterations: 1, maxDuration: '60s' } },
  thresholds: {
    checks: ['rate==1'],
    'resilience_fault_events{action:add_toxic}': ['count==2'],
  },
};

export function setup() {
  const p = tp.createProxy({ name: 'greeter', listen: '127.0.0.1:0', upstream: __ENV.UPSTREAM });
  return { addr: p.listen };
}

export default function (data) {
  client.connect(data.addr, { plaintext: true, reflect: true, timeout: '5s' });
  const hello = () => client.invoke('helloworld.Greeter/SayHello', { name: 'k6' }, { timeout: '5s' });
  const echo = () => client.invoke('grpc.examples.echo.Echo/UnaryEcho', { message: 'k6' }, { timeout: '5s' });
  check(hello(), { 'before the fault: OK': (r) => r.status === grpc.StatusOK });

  tp.addToxic('greeter', {
    name: 'greeter-exhausted', type: 'grpc_error', toxicity: 1,
    attributes: { code: 8, pushback_ms: 500, path: '/helloworld.Greeter/*' },
  });
  check(hello(), { 'matched: RESOURCE_EXHAUSTED from the stage': (r) => r.status === grpc.StatusResourceExhausted });
  check(echo(), { 'unmatched: OK': (r) => r.status === grpc.StatusOK });

  tp.addToxic('greeter', { name: 'slow-echo', type: 'grpc_latency', attributes: { latency: 300, response: 1, path: '/grpc.examples.echo.Echo/UnaryEcho' } });
  const t0 = Date.now();
  const slow = echo();
  check(slow, { 'matched: held 300 ms': (r) => r.status === grpc.StatusOK && Date.now() - t0 >= 280 });

  tp.removeToxic('greeter', 'greeter-exhausted');
  tp.removeToxic('greeter', 'slow-echo');
  check(hello(), { 'after removal: OK': (r) => r.status === grpc.StatusOK });
  client.close();
}

export function teardown() {
  tp.deleteProxy('greeter');
}
