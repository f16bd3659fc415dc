// `svc get`: the same queries offline on a setting file, and against a running node with --api.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { issueLicense, keygen } from '../../lib/license/index.js';
import { getRoutes } from '../../lib/manager/routes/get.js';
import { getCommand, queryFile } from '../../lib/query/index.js';
import { loadSettingFile } from '../../lib/setting-check/load.js';
import { ensureBuilt, startWith } from '../license/helpers.js';
import { hosting, source } from './fixtures.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function svc(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(root, 'dist/bin/svc.js'), ...args], { cwd: root }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : (err.code as number), stdout, stderr });
    });
  });
}

async function settingFile(t: { teardown(fn: () => unknown): void }, content: unknown): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-get-cli-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'setting.json');
  await fs.writeFile(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

const content = { env: { home: './home' }, hosting: hosting().map((h) => ({ ...h, https: undefined })) };

function capture(): { out: string[]; err: string[]; o: (s: string) => void; e: (s: string) => void } {
  const c = { out: [] as string[], err: [] as string[], o: (s: string) => void c.out.push(s), e: (s: string) => void c.err.push(s) };
  return c;
}

t.before(() => ensureBuilt(root));

t.test('svc get evaluates a query on a setting file and prints the result as JSON', async (t) => {
  const file = await settingFile(t, content);
  const { setting } = await loadSettingFile(file);
  const c = capture();
  t.equal(await getCommand('setting.env', { settingPath: file }, c.o, c.e), 0);
  t.strictSame(JSON.parse(c.out.join('')), JSON.parse(JSON.stringify(setting.env)));
  t.equal((JSON.parse(c.out.join('')) as { home: string }).home, path.join(path.dirname(file), 'home'), 'env.home resolves against the file');
  t.match(await queryFile('hosting[name=a.com]', file), { status: 200, result: [{ name: 'a.com', origin: ['10.0.0.1:80', '10.0.0.3'], functions: ['hook'] }] });
  t.match(await queryFile('setting.hosting[0].origin', file), { status: 200, result: { address: ['10.0.0.1:80', '10.0.0.3'] } });
  t.match(await queryFile('/get/setting.hosting[2].name', file), { status: 200, result: 'c.com' });
  t.match(await queryFile('setting/artifact', file), { status: 404 }, 'a setting file has no artifact');
  t.match(await queryFile('https', file), { status: 404, reason: 'no HTTPS service' });
});

t.test('svc get license reads the license named by the setting file', async (t) => {
  const file = await settingFile(t, content);
  const home = path.join(path.dirname(file), 'home');
  // The issuer keeps the private key; the node has only the public key, at its default place.
  const issuer = await keygen(path.join(path.dirname(file), 'issuer'));
  await fs.mkdir(home, { recursive: true });
  await fs.copyFile(issuer.pub, path.join(home, 'license.pub'));
  await fs.writeFile(path.join(home, 'license.xml'), (await issueLicense({ key: issuer.key, name: 'N', type: 'T', serial: 'S', days: 3 })).xml);
  t.match(await queryFile('license', file), { status: 200, result: { Name: 'N', Status: 'Available', Validity: { RemainDays: 3 } } });
});

t.test('the compiled svc get prints results, and failures with their reason and exit code 1', async (t) => {
  const file = await settingFile(t, content);
  const ok = await svc(['get', 'setting.hosting[name=b.com].origin.address', '--setting', file]);
  t.equal(ok.code, 0, ok.stderr);
  t.strictSame(JSON.parse(ok.stdout), ['origin.b.com']);
  const hosts = await svc(['get', 'hosting', '--setting', file]);
  t.strictSame((JSON.parse(hosts.stdout) as Array<{ name: string }>).map((h) => h.name), ['a.com', 'b.com', 'c.com']);

  const missing = await svc(['get', 'setting.env.nope', '--setting', file]);
  t.equal(missing.code, 1);
  t.equal(missing.stdout, '');
  t.equal(missing.stderr, '404: no corresponding setting: setting.env.nope\n');
  const bad = await svc(['get', 'setting.hosting[', '--setting', file]);
  t.equal(bad.code, 1);
  t.match(bad.stderr, /^400: bad query: /);

  const broken = await settingFile(t, '{"env": {"home": 5}}');
  const load = await svc(['get', 'setting', '--setting', broken]);
  t.equal(load.code, 1);
  t.match(load.stderr, /^500: the setting could not be loaded: env\.home: /);
  t.equal((await svc(['get'])).code, 2, 'a query is required');
});

t.test('svc get --api asks a running node the same query', async (t) => {
  const { setting } = await loadSettingFile(await settingFile(t, content));
  setting.env.management.api.allowList = [{ addr: '127.0.0.1' }];
  const { api, port } = await startWith(setting, getRoutes(source(setting)));
  t.teardown(() => api.close());
  const r = await svc(['get', 'setting.hosting[name=c.com].origin.address', '--api', `http://127.0.0.1:${port}`]);
  t.equal(r.code, 0, r.stderr);
  t.strictSame(JSON.parse(r.stdout), ['10.0.0.9:8080']);
  const h = await svc(['get', 'hosting[1]', '--api', `http://127.0.0.1:${port}/`]);
  t.strictSame(JSON.parse(h.stdout), [{ name: 'b.com', origin: ['origin.b.com'], functions: ['pagedesk'] }]);
  const missing = await svc(['get', 'hosting[zzz]', '--api', `http://127.0.0.1:${port}`]);
  t.equal(missing.code, 1);
  t.equal(missing.stderr, '404: no hosting [name=zzz]\n');
  const down = await svc(['get', 'setting', '--api', 'http://127.0.0.1:1']);
  t.equal(down.code, 1);
  t.match(down.stderr, /cannot reach http:\/\/127\.0\.0\.1:1\/get\/setting/);
});
