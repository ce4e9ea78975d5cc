// gRPC load for the bench: constant-arrival-rate unary calls of grpc-go's
// example Greeter (helloworld.Greeter/SayHello), the method resolved by
// server reflection, each VU on its own connection (open model).
// Environment: TARGET (host:port), RATE (per second), DURATION and WARMUP
// (k6 durations: WARMUP of load at RATE before the measured DURATION),
// VUS (pre-allocated), MAX_VUS, SUMMARY (where handleSummary writes counts).
import grpc from 'k6/net/grpc';
import { Counter } from 'k6/metrics';

const client = new grpc.Client();
const notOK = new Counter('grpc_not_ok');
let connected = false;

const rate = parseInt(__ENV.RATE || '1000', 10);
const open = {
  executor: 'constant-arrival-rate',
  rate: rate,
  timeUnit: '1s',
  duration: __ENV.DURATION || '5s',
  preAllocatedVUs: parseInt(__ENV.VUS || '50', 10),
  maxVUs: parseInt(__ENV.MAX_VUS || '200', 10),
  gracefulStop: '3s',
};

const measured = ['iterations', 'dropped_iterations', 'grpc_req_duration', 'grpc_not_ok'];

export const options = {
  scenarios: {
    warmup: Object.assign({}, open, { duration: __ENV.WARMUP || '1s', gracefulStop: '0s' }),
    load: Object.assign({}, open, { startTime: __ENV.WARMUP || '1s' }),
  },
  summaryTrendStats: ['p(50)', 'p(99)', 'max', 'count'],
  thresholds: Object.assign(
    { 'grpc_req_duration{scenario:load}': ['max>=0'] },
    ...measured.filter((m) => m !== 'grpc_req_duration').map((m) => ({ [`${m}{scenario:load}`]: ['count>=0'] })),
  ),
};

export default function () {
  if (!connected) {
    client.connect(__ENV.TARGET, { plaintext: true, reflect: true, timeout: '10s' });
    connected = true;
  }
  const res = client.invoke('helloworld.Greeter/SayHello', { name: 'bench' }, { timeout: '10s' });
  if (!res || res.status !== grpc.StatusOK) {
    notOK.add(1);
  }
}

function count(d, name) {
  const m = d.metrics[name];
  return m ? m.values.count : 0;
}

export function handleSummary(d) {
  const dur = d.metrics['grpc_req_duration{scenario:load}'];
  const all = d.metrics.grpc_req_duration;
  return {
    [__ENV.SUMMARY]: JSON.stringify({
      iterations: count(d, 'iterations{scenario:load}'),
      dropped: count(d, 'dropped_iterations{scenario:load}'),
      reqs: dur ? dur.values.count : 0,
      reqs_all: all ? all.values.count : 0,
      failed: count(d, 'grpc_not_ok{scenario:load}'),
      p50_ms: dur ? dur.values['p(50)'] : 0,
      p99_ms: dur ? dur.values['p(99)'] : 0,
      max_ms: dur ? dur.values.max : 0,
    }),
  };
}
