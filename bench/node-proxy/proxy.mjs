// The runtime's ceiling for the miss path of ../../../shared/bench: node:http passing every request
// to the origin through undici Pool.dispatch with a plain handler object (the fastest client the
// issue measured; undici 8's v2 handler interface), streaming the answer back with back-pressure.
// It stores nothing, so a cache's miss (fetch, answer and store) costs at least this.
// A client that leaves mid-answer (wrk closing its connections at the end of a run, during a
// 1 MiB body) aborts the origin request, as any proxy must: without that, writes to the destroyed
// response raised an 'error' nobody heard and the process died, so the peer answered nothing in
// the workloads after hit-1m.
// Usage: node proxy.mjs PORT ORIGIN_PORT
import http from 'node:http';
import { Pool } from 'undici';

const [port, originPort] = process.argv.slice(2).map(Number);
const pool = new Pool(`http://127.0.0.1:${originPort}`, { connections: 128, pipelining: 1 });
const ignore = () => {};
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-connection']);

http.createServer({ keepAliveTimeout: 120_000 }, (req, res) => {
  res.on('error', ignore);
  pool.dispatch({ method: req.method, path: req.url, headers: req.headers, body: null }, {
    onRequestStart(controller) {
      res.on('close', () => { if (!res.writableFinished) controller.abort(new Error('client closed')); });
    },
    onResponseStart(controller, status) {
      // undici 8 parses the head itself; the raw list keeps the origin's spelling and order.
      const raw = controller.rawHeaders;
      const head = [];
      for (let i = 0; i < raw.length; i += 2) {
        const name = raw[i].toString('latin1');
        if (!HOP.has(name.toLowerCase())) head.push(name, raw[i + 1].toString('latin1'));
      }
      res.writeHead(status, head);
    },
    onResponseData(controller, chunk) {
      if (res.destroyed) return;
      if (!res.write(chunk)) { controller.pause(); res.once('drain', () => controller.resume()); }
    },
    onResponseEnd() { res.end(); },
    onResponseError() { if (res.destroyed) return; if (res.headersSent) res.destroy(); else { res.writeHead(502); res.end(); } },
  });
}).listen(port, '127.0.0.1');
