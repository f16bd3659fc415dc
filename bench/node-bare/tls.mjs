// The runtime's ceiling for bench/https.sh: node:tls with ALPN, then node:http (HTTP/1.1) or
// node:http2's stream API (h2) answering a fixed 1 KiB body with eight headers. No cache, no
// origin, no logging: whatever this does per core, no server written on node's TLS can beat.
// Usage: node tls.mjs PORT CERT KEY
import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import tls from 'node:tls';

const [port, cert, key] = process.argv.slice(2);
const body = Buffer.alloc(1024, 97);
const head = {
  'content-type': 'application/octet-stream', 'content-length': '1024', 'cache-control': 'max-age=3600',
  etag: '"hit-1k"', 'last-modified': 'Tue, 24 Nov 2026 10:00:00 GMT', age: '1', 'x-cache': 'HIT', via: '1.1 bare',
};
const headList = Object.entries(head).flat();
const h1 = http.createServer({ keepAliveTimeout: 120_000 }, (req, res) => { res.writeHead(200, headList); res.end(body); });
const h2 = http2.createServer();
h2.on('stream', (stream) => { stream.respond({ ':status': 200, ...head }); stream.end(body); });
const server = tls.createServer({
  cert: fs.readFileSync(cert), key: fs.readFileSync(key), ALPNProtocols: ['h2', 'http/1.1'], minVersion: 'TLSv1.2',
}, (socket) => (socket.alpnProtocol === 'h2' ? h2 : h1).emit('connection', socket));
server.listen(Number(port), '127.0.0.1');
