#!/usr/bin/env node
// A small origin for trying the server out: `npm run demo-origin` (port 8081, or PORT).
// Each answer says when it was generated, so a cached copy is easy to tell from a fresh one.
import http from 'node:http';

const port = Number(process.env.PORT ?? process.argv[2] ?? 8081);
let served = 0;

const routes = {
  '/': (res) => page(res, 'public, max-age=60', '<h1>svc-edge demo origin</h1><p>Try /cached, /nocache, /slow</p>'),
  '/cached': (res) => page(res, 'public, max-age=60', 'cached for 60 s'),
  '/nocache': (res) => page(res, 'no-store', 'never cached'),
  '/slow': (res) => setTimeout(() => page(res, 'public, max-age=30', 'slow: took 1 s'), 1000),
};

function page(res, cacheControl, text) {
  const body = `${text}\ngenerated at ${new Date().toISOString()} (origin request #${served})\n`;
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': cacheControl,
    'content-length': Buffer.byteLength(body), 'last-modified': new Date(Date.now() - 3600_000).toUTCString() });
  res.end(body);
}

http.createServer((req, res) => {
  served++;
  const route = routes[req.url.split('?')[0]];
  if (route) return route(res);
  const body = `not found: ${req.url}\n`;
  res.writeHead(404, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body), 'cache-control': 'max-age=10' });
  res.end(body);
}).listen(port, '127.0.0.1', () => console.log(`demo origin on http://127.0.0.1:${port}`));
