// Black-box: certificates change without dropping a connection. Overwritten files followed by a
// reload (SIGHUP), and a deploy naming new files, swap the secure context for new handshakes
// while HTTPS clients keep requesting, on keep-alive connections and on new ones: no request
// fails, and the new handshakes see the new certificate.
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import t from 'tap';
import { baseSetting } from '../../helpers/server.js';
import { waitFor } from '../../helpers/wait.js';
import { call } from '../../lifecycle/fixtures/node.js';
import { makeCert, presentedCn, run, tlsNode } from './helpers.js';

const HOST = 'a.test';

function fingerprint(file: string): string {
  return new X509Certificate(fs.readFileSync(file)).fingerprint256;
}

interface Load { ok: number; failed: number; problems: string[]; seen: Set<string> }

/** GETs until `stop()` or a bound (count and time); new connections note the certificate they got. */
function loadLoop(port: number, agent: https.Agent | false, load: Load, isStopped: () => boolean): Promise<void> {
  const until = Date.now() + 60_000;
  const one = (i: number): Promise<void> => new Promise((resolve) => {
    const req = https.request({ host: '127.0.0.1', port, servername: HOST, path: `/load/${i % 20}`, headers: { host: HOST }, agent, rejectUnauthorized: false }, (res) => {
      if (agent === false) load.seen.add((res.socket as TLSSocket).getPeerCertificate().fingerprint256);
      res.resume();
      res.on('end', () => {
        if (res.statusCode === 200) load.ok++; else { load.failed++; load.problems.push(`status ${res.statusCode}`); }
        resolve();
      });
      res.on('error', (err) => { load.failed++; load.problems.push(err.message); resolve(); });
    });
    req.on('error', (err) => { load.failed++; load.problems.push(err.message); resolve(); });
    req.end();
  });
  return (async () => {
    for (let i = 0; !isStopped() && Date.now() < until && i < 50_000; i++) await one(i);
  })();
}

t.test('a certificate swap under HTTPS load fails no request and new handshakes get the new certificate', async (t) => {
  const n = await tlsNode(t, [{ name: HOST, https: [{ cert: 'a.crt', key: 'a.key' }] }], (dir) => makeCert(dir, 'a', HOST), {}, undefined, 2);
  const load: Load = { ok: 0, failed: 0, problems: [], seen: new Set() };
  let stopped = false;
  const keepAlive = new https.Agent({ keepAlive: true, maxSockets: 2 });
  t.teardown(() => keepAlive.destroy());
  const loops = [
    loadLoop(n.tlsPort, keepAlive, load, () => stopped),
    loadLoop(n.tlsPort, keepAlive, load, () => stopped),
    loadLoop(n.tlsPort, false, load, () => stopped),
  ];
  const first = fingerprint(path.join(n.dir, 'a.crt'));
  t.ok(await waitFor(() => load.ok >= 20 && load.seen.has(first)), 'the load runs on the first certificate');

  // 1. The same files, overwritten, then a reload.
  const tmp = path.join(n.dir, 'next');
  fs.mkdirSync(tmp);
  makeCert(tmp, 'a', HOST);
  fs.copyFileSync(path.join(tmp, 'a.key'), path.join(n.dir, 'a.key'));
  fs.copyFileSync(path.join(tmp, 'a.crt'), path.join(n.dir, 'a.crt'));
  const second = fingerprint(path.join(n.dir, 'a.crt'));
  t.not(second, first);
  const reloads = n.server.logs.filter((l) => l.includes('setting reloaded')).length;
  n.server.signal('SIGHUP');
  t.ok(await waitFor(() => n.server.logs.filter((l) => l.includes('setting reloaded')).length > reloads, { timeoutMs: 30_000 }), 'the reload is done');
  t.ok(await waitFor(() => load.seen.has(second), { timeoutMs: 30_000 }), 'new connections of the load see the overwritten certificate');
  const s1 = await run('openssl', ['s_client', '-connect', `127.0.0.1:${n.tlsPort}`, '-servername', HOST]);
  const x1 = await run('openssl', ['x509', '-noout', '-fingerprint', '-sha256'], s1.stdout);
  t.equal(x1.stdout.trim().split('=')[1], second, 'openssl s_client sees the overwritten certificate');

  // 2. A deploy naming other files (an ECDSA certificate this time).
  makeCert(n.dir, 'b', HOST, { ec: true });
  const third = fingerprint(path.join(n.dir, 'b.crt'));
  const hosting = [{ name: HOST, listen: `127.0.0.1:${n.plainPort}`, origin: { address: [`127.0.0.1:${n.origin.port}`] },
    https: [{ cert: 'b.crt', key: 'b.key' }], httpsOptions: { listen: `127.0.0.1:${n.tlsPort}` } }];
  fs.writeFileSync(n.server.settingPath, JSON.stringify(baseSetting(hosting, n.server.basePort, { workers: 2 }, n.server.apiPort)));
  const r = await call(n.server.apiPort, '/setting/deploy/local');
  t.equal(r.json.status, 'OK', r.text);
  t.ok(await waitFor(() => load.seen.has(third), { timeoutMs: 30_000 }), 'new connections of the load see the deployed certificate');
  t.equal((await presentedCn(n.tlsPort, ['-servername', HOST])).out.stdout.includes('Server public key is 256 bit'), true, 'openssl s_client gets the ECDSA key');

  const at = load.ok;
  t.ok(await waitFor(() => load.ok >= at + 20), 'the load goes on after both swaps');
  stopped = true;
  await Promise.all(loops);
  t.equal(load.failed, 0, `no failed request among ${load.ok}: ${load.problems.slice(0, 5).join(', ')}`);
});
