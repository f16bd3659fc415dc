#!/usr/bin/env node
// Wildcard purge of N cached objects while a load of hits runs (issue: "purging a subtree of
// 100,000 objects takes well under a second and never blocks serving").
//   node bench/purge-under-load.mjs [N=100000]
// Starts an origin and the server (dist/, one worker), fills N objects under /obj/, then runs
// wrk on a cached hot URL for 12 s and, 4 s in, purges `/obj/*` through the management API.
// Prints the purge result (Count, Time) and wrk's requests/s and latency per second, so a stall
// during the purge shows as a dip.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const N = Number(process.argv[2] ?? 100000);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-purge-'));
const ports = { svc: 23300, api: 23321, base: 23310, origin: 23302 };

const body = Buffer.alloc(512, 'x');
const origin = http.createServer((req, res) => {
  res.writeHead(200, { 'cache-control': 'max-age=3600', 'content-length': body.length });
  res.end(body);
}).listen(ports.origin, '127.0.0.1');

fs.writeFileSync(path.join(dir, 'setting.json'), JSON.stringify({
  env: { home: dir, cache: { memorySize: '256mb', disks: [{ path: 'disk0', quota: '4gb' }], indexPath: 'index.sqlite' },
    management: { api: { port: ports.api, allowList: [{ addr: '127.0.0.1' }] }, cluster: { meta: { enable: false, baseHostingPort: ports.base } } } },
  hosting: [{ name: 'bench', listen: `127.0.0.1:${ports.svc}`, origin: { address: [`127.0.0.1:${ports.origin}`] } }],
}));
const svc = spawn(process.execPath, [path.join(root, 'dist/bin/svc.js'), 'start', '--setting', path.join(dir, 'setting.json')], { stdio: ['ignore', 'pipe', 'inherit'] });
await new Promise((resolve) => svc.stdout.on('data', (d) => { if (String(d).includes('"started"')) resolve(); }));

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
const get = (p) => new Promise((resolve, reject) => {
  http.get({ host: '127.0.0.1', port: ports.svc, path: p, headers: { host: 'bench' }, agent }, (res) => { res.resume(); res.on('end', () => resolve(res.headers['x-cache'])); }).on('error', reject);
});
const fillStart = Date.now();
let next = 0;
await Promise.all(Array.from({ length: 32 }, async () => { while (next < N) await get(`/obj/${next++}`); }));
await get('/hot'); await get('/hot');
console.log(`filled ${N} objects in ${((Date.now() - fillStart) / 1000).toFixed(1)} s`);
await new Promise((r) => setTimeout(r, 1500)); // let the last index rows commit

const lua = path.join(dir, 'persec.lua');
fs.writeFileSync(lua, `done = function(summary, latency, requests) io.write(string.format("wrk: %d requests, %.0f req/s, p99 %.2f ms, errors %d\\n", summary.requests, summary.requests / (summary.duration / 1e6), latency:percentile(99) / 1000, summary.errors.status + summary.errors.timeout + summary.errors.connect + summary.errors.read + summary.errors.write)) end`);
const wrkArgs = ['-t1', '-c32', '-H', 'Host: bench', '-s', lua];
console.log('before the purge:');
execFileSync('wrk', [...wrkArgs, '-d4s', `http://127.0.0.1:${ports.svc}/hot`], { stdio: ['ignore', 'inherit', 'inherit'] });
const during = spawn('wrk', [...wrkArgs, '-d6s', `http://127.0.0.1:${ports.svc}/hot`], { stdio: ['ignore', 'pipe', 'inherit'] });
let wrkOut = '';
during.stdout.on('data', (d) => { wrkOut += d; });
await new Promise((r) => setTimeout(r, 1500));
const t0 = Date.now();
const purge = await new Promise((resolve) => http.get(`http://127.0.0.1:${ports.api}/command/purge?url=http://bench/obj/*`, (res) => {
  let s = ''; res.on('data', (d) => { s += d; }); res.on('end', () => resolve(JSON.parse(s)));
}));
const wall = Date.now() - t0;
await new Promise((r) => during.on('exit', r));
console.log(`purge /obj/*: ${JSON.stringify(purge.result ?? purge)} (wall ${wall} ms through the API)`);
console.log(`during the purge (6 s window containing it): ${wrkOut.trim()}`);
console.log(`hot URL after: ${await get('/hot')}, a purged URL after: ${await get('/obj/7')}`);
svc.kill('SIGTERM'); origin.close(); agent.destroy();
await new Promise((r) => svc.on('exit', r));
fs.rmSync(dir, { recursive: true, force: true });
