// Load on a gRPC server's two unary methods with k6's own gRPC client, as
// a team writes it: the methods found by server reflection, one
// constant-arrival-rate scenario per method, a check on each status.
// TARGET_GREETER (http://host:port) is set by chaosrun; DURATION too.
import grpc from 'k6/net/grpc';
import { check } from 'k6';

const client = new grpc.Client();
const target = __ENV.TARGET_GREETER.replace(/^http:\/\//, '');
let connected = false;

const open = {
  executor: 'constant-arrival-rate',
  rate: 50,
  timeUnit: '1s',
  duration: __ENV.DURATION || '14s',
  preAllocatedVUs: 10,
  maxVUs: 50,
};

export const options = {
  scenarios: {
    hello: Object.assign({ exec: 'hello' }, open),
    echo: Object.assign({ exec: 'echo' }, open),
  },
};

function connect() {
  if (!connected) {
    client.connect(target, { plaintext: true, reflect: true, timeout: '5s' });
    connected = true;
  }
}

export function hello() {
  connect();
  const res = client.invoke('helloworld.Greeter/SayHello', { name: 'k6' }, { timeout: '1s' });
  check(res, { 'status is OK': (r) => r && r.status === grpc.StatusOK });
}

export function echo() {
  connect();
  const res = client.invoke('grpc.examples.echo.Echo/UnaryEcho', { message: 'k6' }, { timeout: '1s' });
  check(res, { 'status is OK': (r) => r && r.status === grpc.StatusOK });
}
