// The compiled command line, as an operator runs it: keygen, sign, verify, then the license it
// issued installed through the API of a node.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import { LicenseService } from '../../lib/license/index.js';
import { licenseRoutes } from '../../lib/manager/routes/license.js';
import { ensureBuilt, request, settingWith, startWith } from './helpers.js';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const svc = path.join(root, 'dist/bin/svc.js');

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [svc, ...args], { cwd: root });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

// The test runs what `npm run build` produces (`npx tsc -p tsconfig.json`), rebuilt when stale.
t.before(() => ensureBuilt(root));

t.test('svc license keygen, sign and verify issue a license that a node then accepts through the API', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-license-cli-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));

  const kg = await cli(['license', 'keygen', '--out', dir]);
  t.equal(kg.code, 0, kg.stderr);
  t.match(await fs.readFile(path.join(dir, 'license.pub'), 'utf8'), /^-----BEGIN PUBLIC KEY-----/);
  t.equal((await cli(['license', 'keygen', '--out', dir])).code, 1, 'an existing key pair is not overwritten');

  const out = path.join(dir, 'issued.xml');
  const sign = await cli([
    'license', 'sign', '--key', path.join(dir, 'license.key'), '--name', 'ACME', '--type', 'Enterprise', '--serial', 'SN-9',
    '--features', 'ALL', '--days', '365', '--not-before', '20260101000000Z', '--out', out,
  ]);
  t.equal(sign.code, 0, sign.stderr);
  const xml = await fs.readFile(out, 'utf8');
  t.match(xml, /<NotBefore>20260101000000Z<\/NotBefore>\s*<NotAfter>20270101000000Z<\/NotAfter>/);

  const verify = await cli(['license', 'verify', out, '--pub', path.join(dir, 'license.pub')]);
  // Valid from 2026-01-01 for a year: Available unless this test runs outside that year.
  const inPeriod = Date.now() >= Date.UTC(2026, 0, 1) && Date.now() < Date.UTC(2027, 0, 1);
  if (inPeriod) {
    t.equal(verify.code, 0, verify.stderr);
    t.match(JSON.parse(verify.stdout), { Name: 'ACME', SerialNumber: 'SN-9', Status: 'Available' });
  }
  await fs.writeFile(path.join(dir, 'tampered.xml'), xml.replace('SN-9', 'SN-10'));
  const bad = await cli(['license', 'verify', path.join(dir, 'tampered.xml'), '--pub', path.join(dir, 'license.pub')]);
  t.equal(bad.code, 1);
  t.match(bad.stderr, /Invalid signature/);
  t.equal((await cli(['license', 'sign', '--key', path.join(dir, 'license.key')])).code, 2, 'missing options are a usage error');

  // The issued license replaces a node's (empty) license through the API, clock inside its period.
  const license = await LicenseService.open({
    path: path.join(dir, 'node-license.xml'), publicKey: path.join(dir, 'license.pub'), now: () => Date.UTC(2026, 6, 1),
  });
  const { api, port } = await startWith(settingWith(), licenseRoutes(license));
  t.teardown(() => api.close());
  const r = await request(port, '/setting/license/update?force=true', { headers: { 'content-type': 'application/xml' }, body: xml });
  t.strictSame(r.json, { message: 'Done' });
  t.match((await request(port, '/get/license')).json.result, { SerialNumber: 'SN-9', Status: 'Available', Validity: { RemainDays: 184 } });
});

t.test('svc start and validate still answer as before', async (t) => {
  const ok = await cli(['validate', 'setting.json.example']);
  t.equal(ok.code, 0);
  t.equal(ok.stdout, 'setting.json.example: OK\n');
  const usage = await cli(['nothing']);
  t.equal(usage.code, 2);
  t.match(usage.stderr, /^usage: svc start \[--setting PATH\] \| svc validate FILE/);
});
