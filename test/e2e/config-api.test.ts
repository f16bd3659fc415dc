// Black-box: the configuration and license API of a real node (compiled primary + workers):
// /get queries, `svc get --api`, the running setting.json, virtual-host edits built on the
// running setting, and a license issued by the command line, replaced by a second one, and
// expiring while the node serves.
import fs from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { formatLicenseTime } from '../../lib/license/license.js';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { baseSetting, startServer, type RunningServer } from '../helpers/server.js';
import { call, fetchHost, infoLog, LOCAL_LOGS, svc, until } from '../lifecycle/fixtures/node.js';

const origin = await new TestOrigin().start();
t.teardown(() => origin.stop());

// One node for the file (a start costs seconds): the queries first, while it has only a.com;
// the license tests last, the expiring one after the one that made the key pair.
const port = await freePort();
const server: RunningServer = await startServer([{ name: 'a.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }], { extra: LOCAL_LOGS });
t.teardown(() => server.stop());

async function sign(dir: string, serial: string, until: string, out: string): Promise<string> {
  const r = await svc(['license', 'sign', '--key', path.join(dir, 'license.key'), '--name', 'ACME', '--type', 'Enterprise', '--serial', serial,
    '--features', 'ALL', '--not-after', until, '--out', out]);
  if (r.code !== 0) throw new Error(r.stderr);
  return fs.readFile(out, 'utf8');
}

t.test('/get answers the running setting, its hosts and selectors; svc get --api asks the same node', async (t) => {
  const setting = await call(server.apiPort, '/get/setting.hosting[name=a.com].origin');
  t.equal(setting.status, 200);
  t.strictSame(setting.json.result, { protocol: 'http', address: [`127.0.0.1:${origin.port}`], address2: [] }, 'with the defaults filled in');
  t.equal((await call(server.apiPort, '/get/setting/running.env.home')).json.result, server.dir, 'env.home as the node resolved it');
  const hosting = await call(server.apiPort, '/get/hosting');
  t.strictSame(hosting.json.result, [{ name: 'a.com', origin: [`127.0.0.1:${origin.port}`], functions: [] }]);
  const missing = await call(server.apiPort, '/get/hosting[name=nobody.com]');
  t.equal(missing.status, 404);
  t.equal(missing.json.status, 'fail');
  t.equal((await call(server.apiPort, '/get/setting/artifact')).status, 404, 'no artifact before an env change');
  t.strictSame((await call(server.apiPort, '/get/discover')).json.result, []);

  const cli = await svc(['get', 'hosting[name=a.com]', '--api', `http://127.0.0.1:${server.apiPort}`]);
  t.equal(cli.code, 0, cli.stderr);
  t.strictSame(JSON.parse(cli.stdout), hosting.json.result);
  const bad = await svc(['get', 'setting.nothing', '--api', `http://127.0.0.1:${server.apiPort}`]);
  t.equal(bad.code, 1);
  t.match(bad.stderr, /^404: no corresponding setting: setting\.nothing/);
});

t.test('/setting/setting.json and virtual-host edits use the running setting, not local edits on disk', async (t) => {
  const running = await fs.readFile(server.settingPath, 'utf8');
  // An operator edits the file but does not deploy it.
  const edited = baseSetting([{ name: 'local.com', listen: `127.0.0.1:${port}`, origin: { address: ['127.0.0.1:9'] } }], server.basePort, { extra: LOCAL_LOGS }, server.apiPort);
  await fs.writeFile(server.settingPath, JSON.stringify(edited));
  const file = await call(server.apiPort, '/setting/setting.json');
  t.equal(file.status, 200);
  t.equal(file.text, running, 'the running text, not the file on disk');

  const created = await call(server.apiPort, '/setting/vhosts', { body: JSON.stringify({ name: 'b.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}/b`] } }) });
  t.equal(created.status, 200, created.text);
  const names = (await call(server.apiPort, '/get/hosting')).json.result as Array<{ name: string }>;
  t.strictSame(names.map((h) => h.name), ['a.com', 'b.com'], 'the pending local edit was not deployed with it');
  t.equal((await fetchHost(port, 'b.com', '/x')).body, 'origin:GET /b/x');
  t.equal((await fetchHost(port, 'a.com', '/x')).body, 'origin:GET /x');
  const onDisk = JSON.parse(await fs.readFile(server.settingPath, 'utf8')) as { hosting: Array<{ name: string }> };
  t.strictSame(onDisk.hosting.map((h) => h.name), ['a.com', 'b.com'], 'setting.json is the applied setting again');
});

t.test('a license issued by the CLI is installed, replaced by a second one through the API, and serving never stops', async (t) => {
  const none = await call(server.apiPort, '/get/license');
  t.match(none.json.result, { Status: 'None', State: 'Inactive' }, 'no license: the State is Inactive');
  t.equal((await fetchHost(port, 'a.com', '/before')).status, 200, 'serving does not need a license');

  // The issuer's key pair; the node verifies against license.pub in its env.home.
  t.equal((await svc(['license', 'keygen', '--out', server.dir])).code, 0);
  const year = formatLicenseTime(Date.now() + 365 * 86_400_000);
  const first = await sign(server.dir, 'SN-1', year, path.join(server.dir, 'first.xml'));
  const offer = await call(server.apiPort, '/setting/license/update', { body: first, type: 'application/xml' });
  t.equal(offer.status, 200);
  t.match(offer.json, { key: /^[0-9a-f]{32}$/, diff: { SerialNumber: { _asis_: null, _tobe_: 'SN-1' } } });
  t.strictSame(await call(server.apiPort, `/setting/license/update?confirm=${String(offer.json.key)}`).then((r) => r.json), { message: 'Done' });
  t.match((await call(server.apiPort, '/get/license')).json.result, { SerialNumber: 'SN-1', Status: 'Available', State: 'Healthy' });
  await until(async () => ((await infoLog(server)).includes('license state changed: Inactive -> Healthy') ? true : undefined), 'the info log line');

  const second = await sign(server.dir, 'SN-2', formatLicenseTime(Date.now() + 730 * 86_400_000), path.join(server.dir, 'second.xml'));
  const boundary = 'xLicenseBoundary';
  const multipart = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="second.xml"\r\nContent-Type: application/xml\r\n\r\n${second}\r\n--${boundary}--\r\n`;
  let failed = 0;
  let stop = false;
  const load = (async () => {
    for (let i = 0; i < 2000 && !stop; i++) if ((await fetchHost(port, 'a.com', `/during/${i}`)).status !== 200) failed++;
  })();
  const replace = await call(server.apiPort, '/setting/license/update', { body: multipart, type: `multipart/form-data; boundary=${boundary}` });
  t.match(replace.json.diff, { SerialNumber: { _asis_: 'SN-1', _tobe_: 'SN-2' } });
  t.notOk('Name' in (replace.json.diff as object), 'unchanged fields are not in the difference');
  t.strictSame((await call(server.apiPort, `/setting/license/update?confirm=${String(replace.json.key)}`)).json, { message: 'Done' });
  stop = true;
  await load;
  t.equal(failed, 0, 'no request failed while the license was replaced');
  t.match((await call(server.apiPort, '/get/license')).json.result, { SerialNumber: 'SN-2', Status: 'Available', State: 'Healthy' });
  t.equal(await fs.readFile(path.join(server.dir, 'license.xml'), 'utf8'), second, 'env.license.path holds the second license');

  const cli = await svc(['get', 'license', '--api', `http://127.0.0.1:${server.apiPort}`]);
  t.equal(cli.code, 0, cli.stderr);
  t.match(JSON.parse(cli.stdout), { SerialNumber: 'SN-2' });
});

t.test('a license that expires while the node runs makes the State Inactive; the node keeps serving', async (t) => {
  // The key pair of the test above signs it.
  const soon = await sign(server.dir, 'SN-S', formatLicenseTime(Date.now() + 4000), path.join(server.dir, 'soon.xml'));
  t.strictSame((await call(server.apiPort, '/setting/license/update?force=true', { body: soon, type: 'application/xml' })).json, { message: 'Done' });
  t.match((await call(server.apiPort, '/get/license')).json.result, { Status: 'Available', State: 'Healthy' });
  const expired = await until(async () => {
    const r = (await call(server.apiPort, '/get/license')).json.result as Record<string, unknown>;
    return r.State === 'Inactive' ? r : undefined;
  }, 'the State Inactive', 15_000);
  t.match(expired, { Status: 'Expired', Validity: { RemainDays: 0 } });
  await until(async () => ((await infoLog(server)).includes('license state changed: Healthy -> Inactive') ? true : undefined), 'the info log line');
  t.equal((await fetchHost(port, 'a.com', '/after')).status, 200, 'an expired license does not stop serving');
  const update = await call(server.apiPort, '/setting/license/update?force=true', { body: soon, type: 'application/xml' });
  t.strictSame(update.json, { message: 'Expired license' }, 'an expired license is refused');
});
