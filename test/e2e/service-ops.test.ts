// Black-box: /command/encryptpassword (under the node's license), enc: secrets in a setting,
// /command/stop, and the permission and parameter checks of the operations.
import fs from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { baseSetting, operatorRole, primaryPids, startServer } from '../helpers/server.js';
import { pollUntil } from '../helpers/wait.js';
import { call, fetchHost, svc } from '../lifecycle/fixtures/node.js';

async function fetchStatus(url: string): Promise<number> {
  try {
    const r = await request(url);
    await r.body.dump();
    return r.statusCode;
  } catch {
    return 0;
  }
}

async function installLicense(apiPort: number, dir: string, serial: string): Promise<void> {
  const out = path.join(dir, `${serial}.xml`);
  const r = await svc(['license', 'sign', '--key', path.join(dir, 'license.key'), '--name', 'ACME', '--type', 'Enterprise', '--serial', serial, '--features', 'ALL', '--days', '30', '--out', out]);
  if (r.code !== 0) throw new Error(r.stderr);
  const up = await call(apiPort, '/setting/license/update?force=true', { body: await fs.readFile(out), type: 'application/xml' });
  if (up.json.message !== 'Done') throw new Error(up.text);
}

const withSecret = (hosts: unknown[], basePort: number, apiPort: number, secret: string): string => JSON.stringify(baseSetting(hosts, basePort, {
  extra: { env: { ...operatorRole.env, management: { ...operatorRole.env.management, server: { enable: false, connection: [{ name: 'c', type: 'cloudAsdk3', info: { accessKeyId: 'AK', secretAccessKey: secret, region: 'r' } }] } } } },
}, apiPort));

t.test('encryptpassword answers one stable value per license and plain text, survives a restart, and enc: secrets must decrypt', async (t) => {
  const origin = await new TestOrigin().start();
  const port = await freePort();
  const hosts = [{ name: 'e.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }];
  // The statistics collector on: its port passes to the new primary of the restart below.
  const collector = await freePort();
  const extra = { env: { ...operatorRole.env, management: { ...operatorRole.env.management, cluster: { stats: { enable: true, listen: `127.0.0.1:${collector}` } } } } };
  const server = await startServer(hosts, { extra });
  t.teardown(async () => { await server.stop(); await origin.stop(); });
  const api = server.apiPort;

  const none = await call(api, '/command/encryptpassword?plain=s3cret');
  t.equal(none.status, 503, 'no license: refused');
  t.match(none.json.reason, /^service process not running: no license file/);

  t.equal((await svc(['license', 'keygen', '--out', server.dir])).code, 0);
  await installLicense(api, server.dir, 'SN-1');
  const first = await call(api, '/command/encryptpassword?plain=s3cret');
  t.equal(first.status, 200);
  t.match(first.headers['content-type'], /^text\/plain/);
  t.match(first.text, /^enc:[A-Za-z0-9_-]+$/, 'only the value, as text');
  t.equal((await call(api, '/command/encryptpassword?plain=s3cret')).text, first.text, 'the same plain text gives the same value');
  t.not((await call(api, '/command/encryptpassword?plain=s3cres')).text, first.text, 'another plain text another value');
  t.equal((await call(api, '/command/encryptpassword')).status, 400, 'no plain text: bad request');
  t.equal((await call(api, '/command/encryptpassword?plain=')).status, 400, 'an empty plain text: bad request');

  // A setting may carry the value in a secret member; one that does not decrypt is refused.
  const good = await call(api, '/setting/validate', { body: withSecret(hosts, server.basePort, api, first.text) });
  t.equal(good.status, 200, good.text);
  const altered = `${first.text.slice(0, -2)}${first.text.endsWith('AA') ? 'BB' : 'AA'}`;
  const bad = await call(api, '/setting/validate', { body: withSecret(hosts, server.basePort, api, altered) });
  t.equal(bad.status, 500);
  t.equal(bad.json.error, 4);
  t.match(bad.json.reason, /env\.management\.server\.connection\[0\]\.info\.secretAccessKey/, 'the refusal names the member');

  // Stable across a restart of every process.
  const [before] = primaryPids(server);
  t.equal((await call(api, '/command/restart')).json.status, 'success');
  await pollUntil(async () => primaryPids(server), (p) => p.length === 1 && p[0] !== before, { timeoutMs: 30_000, intervalMs: 100 });
  const again = await pollUntil(async () => call(api, '/command/encryptpassword?plain=s3cret').catch(() => undefined), (a) => a?.status === 200, { timeoutMs: 10_000, intervalMs: 100 });
  t.equal(again?.text, first.text, 'the same value after the restart');
  const stats = await pollUntil(async () => fetchStatus(`http://127.0.0.1:${collector}/monitoring/realtime`), (s) => s === 200, { timeoutMs: 10_000, intervalMs: 100 });
  t.equal(stats, 200, 'the statistics collector answers from the new primary');

  // Another license (another serial) gives another value.
  await installLicense(api, server.dir, 'SN-2');
  t.not((await call(api, '/command/encryptpassword?plain=s3cret')).text, first.text, 'another license another value');
});

t.test('the operator role', async (t) => {
  // One node with the operator role for the two tests below; the second one stops it.
  const origin = await new TestOrigin().start();
  const port = await freePort();
  const hosts = [{ name: 'b.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }];
  const server = await startServer(hosts, { extra: operatorRole });
  t.teardown(async () => { await server.stop(); await origin.stop(); });

  t.test('a restart whose new primary cannot start answers fail with the reason, and the running processes go on', async (t) => {
    const [primary] = primaryPids(server);
    const good = await fs.readFile(server.settingPath, 'utf8');
    // Edited by hand into something the new primary refuses.
    await fs.writeFile(server.settingPath, good.replace('"hosting"', '"hosting": 5, "x"'));
    const r = await call(server.apiPort, '/command/service/restart');
    t.equal(r.status, 500);
    t.match(r.json, { method: 'restart', status: 'fail', message: /^restart failed: / });
    const left = await pollUntil(async () => primaryPids(server), (p) => p.length === 1, { timeoutMs: 10_000, intervalMs: 100 });
    t.strictSame(left, [primary], 'the same primary runs (the failed one is gone)');
    t.equal((await fetchHost(port, 'b.com', '/still')).status, 200, 'and serves');
    await fs.writeFile(server.settingPath, good);
    t.equal((await call(server.apiPort, '/command/service/restart')).json.status, 'success', 'a restart works again once the file is good');
  });

  t.test('restart and stop need enableRestart and take no parameters; stop drains and exits 0 with its log lines', async (t) => {
    const plain = await startServer([{ name: 's.com', listen: `127.0.0.1:${await freePort()}`, origin: { address: [`127.0.0.1:${origin.port}`] } }]);
    const denied = await call(plain.apiPort, '/command/service/restart');
    t.equal(denied.status, 401, 'the initial admin role may not restart');
    t.equal((await call(plain.apiPort, '/command/stop')).status, 401, 'nor stop');
    t.equal(await plain.stop(), 0);

    // The restart of the test above has ended once the API answers again.
    const withParameter = await pollUntil(async () => call(server.apiPort, '/command/service/stop?now=1').catch(() => undefined), (a) => a !== undefined, { timeoutMs: 20_000, intervalMs: 100 });
    t.equal(withParameter?.status, 400, 'a parameter: bad request');
    const stop = await call(server.apiPort, '/command/service/stop');
    t.equal(stop.status, 200);
    t.match(stop.json, { method: 'stop', status: 'success' });
    t.equal(await server.exited, 0, 'the node exits 0');
    const info = await fs.readFile(path.join(server.dir, 'svclog', 'info.log'), 'utf8');
    t.match(info, /service stop requested/);
    const watch = await fs.readFile(path.join(server.dir, 'svclog', 'watch.log'), 'utf8');
    t.match(watch, /00010002 - \{\}\n$/, 'the last watch event is the stop');
  });
});
