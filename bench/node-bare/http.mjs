// The runtime's ceiling for the hit workloads of ../../../shared/bench: node:http answering from
// a Map what a cache holds after the fill, the same objects as the bench origin (/hit-1k,
// /mix/<id> by the origin's size rule, /hit-1m), each its own Buffer as a cache keeps them, with
// eight header fields (an array to writeHead, end(body)). It fetches nothing: a path it does not
// hold is 404, so only the hit workloads mean anything. Usage: node http.mjs PORT
import http from 'node:http';

const KiB = 1024;
const MiB = 1024 * KiB;
// The origin's bytes (../../../shared/bench/origin.js): every body is a prefix of this.
const BLOB = Buffer.alloc(MiB);
for (let i = 0; i < MiB; i++) BLOB[i] = 97 + ((i * 7) % 26);
const mixSize = (id) => KiB * (1 + ((Math.imul(id + 1, 2654435761) >>> 0) % 64));

const objects = new Map();
function hold(path, size) {
  const body = Buffer.from(BLOB.subarray(0, size));
  const head = ['content-type', 'application/octet-stream', 'content-length', String(size), 'cache-control', 'public, max-age=3600',
    'etag', `"${path}"`, 'last-modified', 'Tue, 24 Nov 2026 10:00:00 GMT', 'age', '1', 'x-cache', 'HIT', 'via', '1.1 bare'];
  objects.set(path, { head, body });
}
hold('/hit-1k', KiB);
hold('/hit-1m', MiB);
for (let id = 0; id < 10_000; id++) hold(`/mix/${id}`, mixSize(id));

http.createServer({ keepAliveTimeout: 120_000 }, (req, res) => {
  const o = objects.get(req.url);
  if (o === undefined) { res.writeHead(404, { 'content-length': '0' }); res.end(); return; }
  res.writeHead(200, o.head);
  res.end(o.body);
}).listen(Number(process.argv[2]), '127.0.0.1');
