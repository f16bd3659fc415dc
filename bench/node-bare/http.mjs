// The runtime's ceiling for hit-1k in ../../../shared/bench: node:http answering a fixed 1 KiB body
// with eight headers (an array to writeHead, end(body)), the server the issue measured at
// 58.6k req/s beside nginx's 54.7k. Usage: node http.mjs PORT
import http from 'node:http';

const body = Buffer.alloc(1024, 97);
const head = ['content-type', 'application/octet-stream', 'content-length', '1024', 'cache-control', 'max-age=3600',
  'etag', '"hit-1k"', 'last-modified', 'Tue, 24 Nov 2026 10:00:00 GMT', 'age', '1', 'x-cache', 'HIT', 'via', '1.1 bare'];
http.createServer({ keepAliveTimeout: 120_000 }, (req, res) => { res.writeHead(200, head); res.end(body); })
  .listen(Number(process.argv[2]), '127.0.0.1');
