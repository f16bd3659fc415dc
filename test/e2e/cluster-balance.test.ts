// Black-box: the primary and two RT workers in hash balance: which worker fetches a URL from the
// origin (the ring's owner, or the one a balance.luaPath script names), and the hand-over of a
// request to its owner. The two ring behaviours share one node; the script needs a node of its own.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { rawRequest } from '../helpers/raw-client.js';
import { startServer } from '../helpers/server.js';
import { HashRing } from '../../lib/balance/ring.js';
import { fresh } from './fixtures/cluster.js';

t.test('in hash balance', async (t) => {
  const origin = await new TestOrigin().start();
  const port = await freePort();
  const server = await startServer([
    { name: 'h.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
    { name: 'a.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}/a`] } },
    { name: 'b.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}/b`] } },
  ], { workers: 2, balance: 'hash', env: { SVC_DEBUG_HEADERS: '1' } });
  t.teardown(async () => { await server.stop(); await origin.stop(); });

  t.test('each URL is fetched from the origin by its one owner worker', async (t) => {
    const owners = new Set<string>();
    for (let u = 0; u < 12; u++) {
      for (let i = 0; i < 6; i++) {
        // A new connection each time, so the kernel hands requests to both workers.
        const r = await request(`http://127.0.0.1:${port}/obj/${u}`, { headers: { host: 'h.com' }, dispatcher: fresh() });
        await r.body.text();
        t.equal(r.statusCode, 200);
      }
      const fetchers = new Set(origin.seen.filter((s) => s.url === `/obj/${u}`).map((s) => String(s.headers['x-svc-worker'])));
      t.equal(fetchers.size, 1, `/obj/${u} was fetched by one worker only`);
      for (const f of fetchers) owners.add(f);
    }
    t.same([...owners].sort(), ['0', '1'], 'both workers own a share of the URLs');
    const fwd = origin.seen.filter((s) => s.url.startsWith('/obj/')).map((s) => s.headers['x-forwarded-for']);
    t.ok(fwd.every((x) => x === '127.0.0.1'), 'X-Forwarded-For names the client once, also after a hand-over');
  });

  t.test('an absolute-form request handed to the owner is served by the host of its target', async (t) => {
    for (let u = 0; u < 16; u++) {
      const r = await rawRequest(port, `GET http://a.com/abs/${u} HTTP/1.1\r\nHost: b.com\r\nConnection: close\r\n\r\n`);
      t.equal(r.status, 200);
      t.match(r.text, new RegExp(`origin:GET /a/abs/${u}$`), `/abs/${u} went to a.com's origin`);
    }
    const accepted = new Set(origin.seen.filter((s) => s.url.startsWith('/a/abs/')).map((s) => String(s.headers['x-svc-worker'])));
    t.same([...accepted].sort(), ['0', '1'], 'both workers fetched some, so some were handed over');
  });
});

t.test('in hash balance a balance.luaPath script decides which worker owns a URL', async (t) => {
  // Ring points owned by worker 0 and by worker 1, read off the same ring the primary builds.
  const ring = new HashRing([0, 1]);
  let to0 = -1, to1 = -1;
  for (let p = 1; (to0 < 0 || to1 < 0) && p < 0xffffffff; p += 0x100000) {
    if (ring.ownerOfHash(p) === 0 && to0 < 0) to0 = p; else if (ring.ownerOfHash(p) === 1 && to1 < 0) to1 = p;
  }
  const origin = await new TestOrigin().start();
  const port = await freePort();
  const extraDir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-lua-'));
  const script = path.join(extraDir, 'owner.lua');
  await fs.writeFile(script, `function hash(key)\n  if key:find("/zero/", 1, true) then return 0x${to0.toString(16)} end\n  return 0x${to1.toString(16)}\nend\n`);
  const server = await startServer([{ name: 'l.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }],
    { workers: 2, balance: 'hash', luaPath: script, env: { SVC_DEBUG_HEADERS: '1' } });
  t.teardown(async () => { await server.stop(); await origin.stop(); await fs.rm(extraDir, { recursive: true, force: true }); });
  for (const dir of ['zero', 'one']) {
    for (let u = 0; u < 6; u++) {
      for (let i = 0; i < 3; i++) {
        const r = await request(`http://127.0.0.1:${port}/${dir}/${u}`, { headers: { host: 'l.com' }, dispatcher: fresh() });
        await r.body.text();
        t.equal(r.statusCode, 200);
      }
    }
  }
  const fetchers = (dir: string): string[] => [...new Set(origin.seen.filter((s) => s.url.startsWith(`/${dir}/`)).map((s) => String(s.headers['x-svc-worker'])))];
  t.same(fetchers('zero'), ['0'], 'every /zero/ URL was fetched by worker 0, as the script says');
  t.same(fetchers('one'), ['1'], 'every other URL was fetched by worker 1');
});
