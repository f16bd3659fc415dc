#!/usr/bin/env node
// Wildcard purge of N cached objects while a load of hits runs (issue 4: "purging a subtree of
// 100,000 objects takes well under a second and never blocks serving").
//   npm run build && node bench/purge-under-load.mjs [N=100000] [seconds after the purge=4]
// Starts an origin and the server (dist/, one worker; WORKERS=n for more), fills N objects under
// /obj/, then runs a keep-alive load over hot URLs (3/4 under /hot/, 1/4 under the purged /obj/),
// purges `/obj/*` through the management API after 3 s, and goes on until some seconds after it
// ended. Every answer's X-Cache is counted per second: the table shows req/s and hit rate per
// second, then totals before, during and after the purge. Ports come from the OS.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const N = Number(process.argv[2] ?? 100000);
const AFTER_S = Number(process.argv[3] ?? 4);
const WORKERS = Number(process.env.WORKERS ?? 1);
const CONCURRENCY = 32;
const HOT = 200;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-purge-'));

const freePort = () => new Promise((resolve, reject) => {
  const s = net.createServer().once('error', reject).listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
});
/** A run of free ports for the workers' internal ports (baseHostingPort + i). */
async function freeRun(count) {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20000 + Math.floor(Math.random() * 30000);
    let ok = true;
    for (let i = 0; i < count && ok; i++) {
      ok = await new Promise((r) => { const s = net.createServer().once('error', () => r(false)).listen(base + i, '127.0.0.1', () => s.close(() => r(true))); });
    }
    if (ok) return base;
  }
  throw new Error('no run of free ports');
}

const body = Buffer.alloc(512, 'x');
const origin = http.createServer((req, res) => {
  res.writeHead(200, { 'cache-control': 'max-age=3600', 'content-length': body.length });
  res.end(body);
});
await new Promise((r) => origin.listen(0, '127.0.0.1', r));
const ports = { origin: origin.address().port, svc: await freePort(), api: await freePort(), base: await freeRun(Math.max(1, WORKERS)) };

fs.writeFileSync(path.join(dir, 'setting.json'), JSON.stringify({
  env: { home: dir, cache: { memorySize: '256mb', disks: [{ path: 'disk0', quota: '4gb' }], indexPath: 'index.sqlite' },
    management: { api: { port: ports.api, allowList: [{ addr: '127.0.0.1' }] },
      cluster: { meta: { enable: WORKERS > 1, workers: WORKERS, baseHostingPort: ports.base }, stats: { enable: false } } } },
  hosting: [{ name: 'bench', listen: `127.0.0.1:${ports.svc}`, origin: { address: [`127.0.0.1:${ports.origin}`] } }],
}));
const svc = spawn(process.execPath, [path.join(root, 'dist/bin/svc.js'), 'start', '--setting', path.join(dir, 'setting.json')], { stdio: ['ignore', 'pipe', 'inherit'] });
await new Promise((resolve, reject) => {
  svc.stdout.on('data', (d) => { if (String(d).includes('"started"')) resolve(); });
  svc.once('exit', (code) => reject(new Error(`server exited ${code}`)));
});

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
const get = (p) => new Promise((resolve, reject) => {
  http.get({ host: '127.0.0.1', port: ports.svc, path: p, headers: { host: 'bench' }, agent }, (res) => {
    res.resume();
    res.on('end', () => resolve(String(res.headers['x-cache'])));
  }).on('error', reject);
});
const api = (p) => new Promise((resolve, reject) => {
  http.get({ host: '127.0.0.1', port: ports.api, path: p }, (res) => {
    let s = ''; res.on('data', (d) => { s += d; }); res.on('end', () => resolve(JSON.parse(s)));
  }).on('error', reject);
});

const fillStart = Date.now();
let next = 0;
await Promise.all(Array.from({ length: CONCURRENCY }, async () => { while (next < N) await get(`/obj/${next++}`); }));
const hot = Array.from({ length: HOT }, (_, i) => (i % 4 === 0 ? `/obj/${i}` : `/hot/${i}`));
for (const p of hot) await get(p);
console.log(`filled ${N} objects under /obj/ and ${HOT} hot URLs in ${((Date.now() - fillStart) / 1000).toFixed(1)} s`);
// Wait until the index holds the last object filled with its body on disk (rows commit after
// the answers, in order): otherwise the purge would first wait for those writes (commands wait
// for writes in flight under their targets) and the figure would measure the fill.
const onDisk = (info) => Array.isArray(info.result) && info.result.some((r) => r.LocalPath !== undefined && r.LocalPath !== '-');
const settleStart = Date.now();
while (Date.now() - settleStart < 120_000 && !onDisk(await api(`/monitoring/fileinfo?url=bench/obj/${N - 1}`))) await new Promise((r) => setTimeout(r, 100));
console.log(`the index held every object ${((Date.now() - settleStart) / 1000).toFixed(1)} s after the last answer`);

// Load: CONCURRENCY keep-alive loops over the hot URLs; per-second buckets of answers and hits.
const started = Date.now();
const buckets = [];
const bucket = () => (buckets[Math.floor((Date.now() - started) / 1000)] ??= { n: 0, hits: 0 });
let stop = false;
let errors = 0;
const loops = Array.from({ length: CONCURRENCY }, async (_, w) => {
  for (let i = w; !stop; i += CONCURRENCY) {
    try {
      const xc = await get(hot[i % HOT]);
      const b = bucket();
      b.n++;
      if (xc.endsWith('_HIT')) b.hits++;
    } catch { errors++; }
  }
});
await new Promise((r) => setTimeout(r, 3000));
const t0 = Date.now();
const purge = await api('/command/purge?url=bench/obj/*');
const t1 = Date.now();
await new Promise((r) => setTimeout(r, AFTER_S * 1000));
stop = true;
await Promise.all(loops);

const sec = (ms) => Math.floor((ms - started) / 1000);
const phase = (s) => (s < sec(t0) ? 'before' : s <= sec(t1) ? 'during' : 'after');
console.log(`purge bench/obj/*: ${JSON.stringify(purge.result ?? purge)}; ${t1 - t0} ms through the API`);
console.log('second  phase   req/s  hit%');
const totals = { before: { n: 0, hits: 0, s: 0 }, during: { n: 0, hits: 0, s: 0 }, after: { n: 0, hits: 0, s: 0 } };
buckets.forEach((b, s) => {
  if (b === undefined) return;
  const p = phase(s);
  totals[p].n += b.n; totals[p].hits += b.hits; totals[p].s++;
  console.log(`${String(s).padStart(6)}  ${p.padEnd(6)} ${String(b.n).padStart(6)}  ${(100 * b.hits / Math.max(1, b.n)).toFixed(1)}`);
});
for (const [p, v] of Object.entries(totals)) {
  if (v.s === 0) continue;
  console.log(`${p.padEnd(6)}: ${(v.n / v.s).toFixed(0)} req/s over ${v.s} s, hit rate ${(100 * v.hits / Math.max(1, v.n)).toFixed(1)} %`);
}
const all = Object.values(totals).reduce((a, v) => ({ n: a.n + v.n, hits: a.hits + v.hits }), { n: 0, hits: 0 });
console.log(`overall: ${all.n} requests, ${(all.n / ((Date.now() - started) / 1000)).toFixed(0)} req/s, hit rate ${(100 * all.hits / Math.max(1, all.n)).toFixed(1)} %, errors ${errors}`);

svc.kill('SIGTERM'); origin.close(); agent.destroy();
await new Promise((r) => svc.on('exit', r));
fs.rmSync(dir, { recursive: true, force: true });
