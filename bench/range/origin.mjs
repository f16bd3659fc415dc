// bench/range/origin.mjs PORT - an origin for bench/range-ttfb.sh: every path is a 4 GiB object
// (a deterministic byte function of the offset, nothing on disk) with a strong ETag, served at
// loopback speed: 200 in full, or 206 for one range (bytes=a-b, a-, -n).
import http from 'node:http';

const TOTAL = 2 ** 32;
const CHUNK = 256 * 1024;
// One pattern block reused for every chunk: the origin must not be the bottleneck.
const block = Buffer.alloc(CHUNK);
for (let i = 0; i < CHUNK; i++) block[i] = i & 255;

http.createServer((req, res) => {
  const head = { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=3600', etag: '"bench-4g"', 'accept-ranges': 'bytes' };
  const m = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
  let start = 0;
  let end = TOTAL - 1;
  if (m === null) res.writeHead(200, { ...head, 'content-length': TOTAL });
  else {
    if (m[1] === '') start = Math.max(0, TOTAL - Number(m[2]));
    else { start = Number(m[1]); if (m[2] !== '') end = Math.min(Number(m[2]), TOTAL - 1); }
    res.writeHead(206, { ...head, 'content-range': `bytes ${start}-${end}/${TOTAL}`, 'content-length': end - start + 1 });
  }
  let pos = start;
  const more = () => {
    while (pos <= end && !res.destroyed) {
      const n = Math.min(CHUNK, end - pos + 1);
      const off = pos % CHUNK;
      const chunk = off + n <= CHUNK ? block.subarray(off, off + n) : Buffer.concat([block.subarray(off), block.subarray(0, n - (CHUNK - off))]);
      pos += n;
      if (!res.write(chunk)) { res.once('drain', more); return; }
    }
    if (!res.destroyed) res.end();
  };
  res.on('close', () => { pos = end + 1; });
  more();
}).listen(Number(process.argv[2]), '127.0.0.1');
