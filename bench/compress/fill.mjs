// Fills a proxy for bench/compress.sh: every /mix/<id> is requested with the benchmark's
// Accept-Encoding until the answer comes encoded (a cache may answer the fetching request as
// identity and make the encoded copy on a later hit), at most `tries` times; prints one JSON line.
//   node fill.mjs TARGET COUNT ACCEPT_ENCODING [CONCURRENCY] [TRIES]
import http from 'node:http';

const [target, countArg, acceptEncoding, concArg, triesArg] = process.argv.slice(2);
const url = new URL(target);
const count = Number(countArg);
const concurrency = Number(concArg ?? 8);
const tries = Number(triesArg ?? 5);
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });

function get(path) {
  return new Promise((resolve) => {
    const req = http.get({ host: url.hostname, port: url.port, path, agent, headers: { 'accept-encoding': acceptEncoding } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, coding: res.headers['content-encoding'] ?? 'identity' }));
    });
    req.on('error', () => resolve({ status: 0, coding: 'none' }));
  });
}

let next = 0;
let failed = 0;
const codings = {};
async function worker() {
  while (next < count) {
    const id = next++;
    let r = { status: 0, coding: 'none' };
    for (let i = 0; i < tries; i++) {
      r = await get(`/mix/${id}`);
      if (r.status !== 200 || r.coding !== 'identity') break;
    }
    if (r.status !== 200) failed++;
    codings[r.coding] = (codings[r.coding] ?? 0) + 1;
  }
}
await Promise.all(Array.from({ length: concurrency }, worker));
agent.destroy();
console.log(JSON.stringify({ requested: count, failed, codings }));
