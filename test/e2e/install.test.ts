// Black-box: /command/install from a release repository built by `svc release` from this
// checkout: a second version is installed beside the running one and the node restarts into it
// while a client keeps requesting, then back; a corrupted or unsigned package is refused and the
// running version stays; the three messages of document 1.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { Agent, request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { operatorRole, projectRoot, startServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';
import { INDEX, sha256Line, sign, tarballName } from '../../lib/release/format.js';
import { call, svc } from '../lifecycle/fixtures/node.js';

const VERSION = (JSON.parse(await fs.readFile(path.join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version;
const [major, minor, patch] = VERSION.split('-')[0]!.split('.').map(Number) as [number, number, number];
const NEXT = `${major}.${minor}.${patch + 1}`;
const BAD = `${major}.${minor}.${patch + 2}`;
const UNSIGNED = `${major}.${minor}.${patch + 3}`;

async function release(keyDir: string, repo: string, version: string): Promise<void> {
  const r = await svc(['release', '--key', path.join(keyDir, 'license.key'), '--out', repo, '--version', version]);
  if (r.code !== 0) throw new Error(r.stderr);
}

/** Lists the package of `from` as `version` in the repository, with its checksum and (if `signed`) its signature. */
async function publishAs(keyDir: string, repo: string, from: string, version: string, o: { signed: boolean }): Promise<void> {
  const data = await fs.readFile(path.join(repo, tarballName(from)));
  const name = tarballName(version);
  await fs.writeFile(path.join(repo, name), data);
  await fs.writeFile(path.join(repo, `${name}.sha256`), sha256Line(data, name));
  if (o.signed) await fs.writeFile(path.join(repo, `${name}.sig`), `${sign(data, crypto.createPrivateKey(await fs.readFile(path.join(keyDir, 'license.key'), 'utf8')))}\n`);
  await listVersion(repo, version);
}

async function listVersion(repo: string, version: string): Promise<void> {
  const index = JSON.parse(await fs.readFile(path.join(repo, INDEX), 'utf8')) as { versions: string[] };
  await fs.writeFile(path.join(repo, INDEX), JSON.stringify({ versions: [...index.versions, version] }));
}

t.test('install switches to a version built by svc release and back, refusing corrupted and unsigned packages', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-install-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const keys = path.join(dir, 'keys');
  const repo = path.join(dir, 'repo');
  t.equal((await svc(['license', 'keygen', '--out', keys])).code, 0);
  // The two releases side by side (npm pack takes seconds), NEXT's into a directory of its own, as
  // two releases write the same index.json; then NEXT joins the repository.
  const nextRepo = path.join(dir, 'repo-next');
  await Promise.all([release(keys, repo, VERSION), release(keys, nextRepo, NEXT)]);
  for (const f of [tarballName(NEXT), `${tarballName(NEXT)}.sha256`, `${tarballName(NEXT)}.sig`]) await fs.copyFile(path.join(nextRepo, f), path.join(repo, f));
  await listVersion(repo, NEXT);

  // The first version installed by hand, as an operator does once: root/<version> and root/current.
  const root = path.join(dir, 'svc');
  await fs.mkdir(path.join(root, VERSION), { recursive: true });
  execFileSync('tar', ['xzf', path.join(repo, `svc-edge-${VERSION}.tgz`), '--strip-components=1', '-C', path.join(root, VERSION)]);
  execFileSync('cp', ['-al', path.join(projectRoot, 'node_modules'), path.join(root, VERSION, 'node_modules')]);
  await fs.symlink(VERSION, path.join(root, 'current'));

  const origin = await new TestOrigin().start();
  const port = await freePort();
  const hosts = [{ name: 'i.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }];
  // The repository over HTTP, as a fleet reads it (test/release/repository.test.ts reads a directory too).
  const files = http.createServer((req, res) => {
    fs.readFile(path.join(repo, path.basename(req.url ?? ''))).then((b) => res.end(b), () => { res.statusCode = 404; res.end(); });
  });
  await new Promise<void>((r) => files.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => files.close(() => r())));
  const url = `http://127.0.0.1:${(files.address() as AddressInfo).port}/releases/`;
  const extra = { env: { ...operatorRole.env, install: { repository: url, publicKey: path.join(keys, 'license.pub') } } };
  const server = await startServer(hosts, { workers: 2, extra, entry: path.join(root, 'current/dist/bin/svc.js') });
  t.teardown(async () => { await server.stop(); await origin.stop(); });
  const api = server.apiPort;
  const version = async (): Promise<unknown> => (await call(api, '/monitoring/hwinfo').catch(() => undefined))?.json.version;
  // The answer comes once the new processes serve; the management port follows a moment later.
  const versionBecomes = (v: string): Promise<boolean> => waitFor(async () => (await version()) === v, { timeoutMs: 20_000, intervalMs: 100 });
  t.equal(await version(), VERSION);

  let ok = 0, failed = 0, stop = false;
  const agent = new Agent({ connections: 4 });
  // Bounded: at most 20000 requests within 120 s.
  const loop = (async () => {
    const until = Date.now() + 120_000;
    for (let i = 0; !stop && i < 20_000 && Date.now() < until; i++) {
      try {
        const r = await request(`http://127.0.0.1:${port}/i/${i % 20}`, { headers: { host: 'i.com' }, dispatcher: agent });
        await r.body.text();
        if (r.statusCode === 200) ok++; else failed++;
      } catch { failed++; }
    }
  })();
  t.ok(await waitFor(() => ok >= 20, { timeoutMs: 20_000 }), 'the load is running');

  const up = await call(api, '/command/install');
  t.equal(up.status, 200, up.text);
  t.match(up.json, { method: 'install', status: 'success', message: `installing from ${VERSION} to ${NEXT}: done, ${NEXT} serves.` });
  t.ok(await versionBecomes(NEXT), 'the node runs the newest version');
  t.equal(await fs.readlink(path.join(root, 'current')), NEXT, 'current points at it');
  t.ok(await fs.stat(path.join(root, VERSION, 'dist/bin/svc.js')), 'the previous version stays beside it');

  const same = await call(api, `/command/install/${NEXT}`);
  t.match(same.json, { status: 'success', message: `${NEXT} is already the current version.` });
  const missing = await call(api, '/command/install/9.9.9');
  t.equal(missing.status, 404);
  t.match(missing.json, { status: 'fail', message: '9.9.9 is not available.' });

  // A package altered after signing, and one without its signature. Both are refused before
  // they are unpacked, so NEXT's package listed under their versions serves (an `svc release`
  // costs seconds of npm pack): checksummed and signed as svc release does, then altered.
  await publishAs(keys, repo, NEXT, BAD, { signed: true });
  await publishAs(keys, repo, NEXT, UNSIGNED, { signed: false });
  const bad = path.join(repo, `svc-edge-${BAD}.tgz`);
  const bytes = await fs.readFile(bad);
  bytes[bytes.length >> 1] ^= 0xff;
  await fs.writeFile(bad, bytes);
  const corrupted = await call(api, `/command/install/${BAD}`);
  t.equal(corrupted.status, 500);
  t.match(corrupted.json.message, /does not match its checksum/, 'a corrupted package is refused');
  const unsigned = await call(api, `/command/install/${UNSIGNED}`);
  t.match(unsigned.json, { status: 'fail', message: /is not signed/ }, 'an unsigned package is refused');
  t.equal(await version(), NEXT, 'the running version stays');
  t.equal(await fs.readlink(path.join(root, 'current')), NEXT, 'current was not touched');
  t.notOk(await fs.stat(path.join(root, BAD)).catch(() => undefined), 'nothing of the refused package was unpacked');

  const back = await call(api, `/command/install/${VERSION}`);
  t.match(back.json, { status: 'success', message: `installing from ${NEXT} to ${VERSION}: done, ${VERSION} serves.` });
  t.ok(await versionBecomes(VERSION), 'back on the first version');
  const okBefore = ok;
  t.ok(await waitFor(() => ok >= okBefore + 20, { timeoutMs: 20_000 }), 'the load goes on');
  stop = true;
  await loop;
  await agent.close();
  t.equal(failed, 0, `no request failed of ${ok} during two installs`);
  const info = await fs.readFile(path.join(server.dir, 'svclog', 'info.log'), 'utf8');
  t.match(info, /package installed .*"to":"/);
  t.match(info, /package install refused; the running version stays/);
});
