// Microbenchmark of key streams called from a k6 script: prints the cost of
// one stream.next() call (minus an empty loop) per stream kind.
// k6 run -e N=200000 keys-micro.js
import resilience from 'k6/x/resilience';

const N = Number(__ENV.N || 200000);
const streams = {
  uniform: resilience.keys.uniform({ n: 4096 }),
  zipf: resilience.keys.zipf({ n: 1000000, s: 0.99 }),
  hotset: resilience.keys.hotset({ n: 1000000, hot: 100, p: 0.9 }),
  bot: resilience.keys.bot({ key: 'bot-1' }),
};

export const options = { iterations: 1, vus: 1 };

function timeLoop(next) {
  let k;
  const t0 = Date.now();
  for (let i = 0; i < N; i++) k = next();
  return [(Date.now() - t0) * 1e6 / N, k];
}

export default function () {
  const [empty] = timeLoop(() => 'k');
  console.log(`empty JS function call: ${empty.toFixed(0)} ns/call`);
  for (const [name, s] of Object.entries(streams)) {
    timeLoop(() => s.next());
    const [ns] = timeLoop(() => s.next());
    console.log(`${name}.next(): ${ns.toFixed(0)} ns/call through a JS arrow (${Math.max(ns - empty, 0).toFixed(0)} ns above an empty call)`);
  }
}
