// Black-box: the hook follows a setting reload (SIGHUP): enabled, moved to another hook server,
// refused at its JSON path (the running hook stays), disabled.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { baseSetting, startServer, writeSetting } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/** A hook server that answers every request itself with `name`. */
async function hookServer(name: string): Promise<{ url: string; close: () => Promise<void> }> {
  const s = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const text = JSON.stringify({ response: { code: 200, body: `from ${name}` } });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/hook`, close: () => new Promise<void>((r) => s.close(() => r())) };
}
const a = await hookServer('a');
const b = await hookServer('b');
const origin = await new TestOrigin().start();
const port = await freePort();
const hostWith = (hook: unknown) => [{
  name: 'r.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] }, functions: { hook },
}];
const server = await startServer(hostWith({ enable: false }));
t.teardown(async () => { await server.stop(); await origin.stop(); await a.close(); await b.close(); });

const body = async (p: string): Promise<string> => {
  const r = await request(`http://127.0.0.1:${port}${p}`, { headers: { host: 'r.test' } });
  return r.body.text();
};

async function reload(hook: unknown, line: string): Promise<void> {
  const before = server.logs.filter((l) => l.includes(line)).length;
  await writeSetting(server.dir, baseSetting(hostWith(hook), server.basePort, {}, server.apiPort));
  const text = fs.readFileSync(server.settingPath, 'utf8');
  server.signal('SIGHUP');
  t.ok(await waitFor(() => server.logs.filter((l) => l.includes(line)).length > before), line);
  if (line === 'setting reloaded') {
    await waitFor(async () => (await (await fetch(`http://127.0.0.1:${server.apiPort}/setting/setting.json`)).text()) === text);
  }
}

t.test('a hook enabled, moved, refused and disabled by reloads answers as the running setting says', async (t) => {
  t.equal(await body('/x'), 'origin:GET /x');
  await reload({ enable: true, path: a.url }, 'setting reloaded');
  t.equal(await body('/x'), 'from a');
  await reload({ enable: true, path: b.url }, 'setting reloaded');
  t.equal(await body('/x'), 'from b');
  await reload({ enable: true, path: 'ftp://127.0.0.1/hook' }, 'setting refused');
  t.match(server.logs.find((l) => l.includes('setting refused'))!, 'functions.hook.path');
  t.equal(await body('/x'), 'from b', 'the running hook stays');
  await reload({ enable: false }, 'setting reloaded');
  t.equal(await body('/y'), 'origin:GET /y');
});
