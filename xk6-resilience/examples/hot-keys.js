// Skewed keys: most traffic on a few keys (Zipf), a hot set, and one bot
// hammering a single key. key_class tags let thresholds and plots split
// hot from cold keys.
//
//   k6 run -e TARGET=http://127.0.0.1:8080 examples/hot-keys.js
import http from 'k6/http';
import resilience from 'k6/x/resilience';

const TARGET = __ENV.TARGET || 'http://127.0.0.1:8080';
const DURATION = __ENV.DURATION || '30s';

const zipf = resilience.keys.zipf({ n: 100000, s: 1.1, hot: 100, seed: 7, prefix: 'acct-' });
const hotset = resilience.keys.hotset({ n: 100000, hot: 10, p: 0.8, prefix: 'acct-' });
const bot = resilience.keys.bot({ key: 'acct-42' });

export const options = {
  scenarios: {
    users: { ...resilience.shapes.flood({ rate: 50, duration: DURATION }), exec: 'users' },
    sale: { ...resilience.shapes.flood({ rate: 20, duration: DURATION }), exec: 'sale' },
    bot: { ...resilience.shapes.flood({ rate: 100, duration: DURATION, startTime: __ENV.BOT_START || '5s' }), exec: 'scraper' },
  },
};

function get(stream, caller) {
  const key = stream.next();
  http.get(`${TARGET}/accounts/${key}`, { tags: { name: 'account', key_class: stream.class(), caller } });
}

export function users() { get(zipf, 'user'); }
export function sale() { get(hotset, 'sale'); }
export function scraper() { get(bot, 'bot'); }
