// Origin of bench/compress.sh: /mix/<id> is a compressible text object (HTML-like lines, 1..64
// KiB, size and content fixed by id), `max-age=3600`, identity. GET /__count answers how many
// /mix requests arrived (the proxies should fetch each object once, not once per coding).
//   node origin.mjs PORT
import http from 'node:http';

const KiB = 1024;
const port = Number(process.argv[2] ?? 24080);
let fetches = 0;

// Size of /mix/<id>: 1..64 KiB, a fixed function of id (as the shared harness's mix).
const sizeOf = (id) => KiB * (1 + ((id * 2654435761) >>> 0) % 64);
const WORDS = ['edge', 'cache', 'origin', 'object', 'variant', 'request', 'answer', 'header', 'stored', 'fresh', 'stale', 'purge'];
function bodyOf(id) {
  const size = sizeOf(id);
  let s = '';
  for (let i = 0; s.length < size; i++) {
    s += `<li class="item-${i % 7}">${WORDS[(id + i) % WORDS.length]} ${id} ${i} ${WORDS[(i * 5) % WORDS.length]}</li>\n`;
  }
  return Buffer.from(s.slice(0, size));
}

http.createServer((req, res) => {
  const parts = req.url.split('?')[0].split('/');
  if (parts[1] === '__count') { res.end(String(fetches)); return; }
  if (parts[1] !== 'mix') { res.writeHead(404, { 'content-length': 0 }); res.end(); return; }
  fetches++;
  const body = bodyOf(Number(parts[2]) | 0);
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length, 'cache-control': 'public, max-age=3600' });
  res.end(body);
}).listen(port, '127.0.0.1');
