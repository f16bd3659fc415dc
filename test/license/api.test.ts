import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { issueLicense, keygen, LicenseService } from '../../lib/license/index.js';
import { licenseRoutes } from '../../lib/manager/routes/license.js';
import { multipart, request, settingWith, startWith, VERSION } from './helpers.js';

const DAY = 86_400_000;
const XML = { 'content-type': 'application/xml' };

/** A node with the license routes, an issuer key pair and a clock the test moves. */
async function node(t: { teardown(fn: () => unknown): void }, opts: { installed?: boolean } = {}) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-license-api-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const { key, pub } = await keygen(dir);
  const clock = { now: Date.UTC(2026, 5, 1) };
  const issue = async (o: { name?: string; serial?: string; days?: number; features?: string; at?: number } = {}) =>
    (await issueLicense({
      key, name: o.name ?? 'ACME', type: 'Enterprise', serial: o.serial ?? 'SN-1', features: o.features ?? 'ALL',
      days: o.days ?? 365, now: o.at ?? clock.now,
    })).xml;
  const file = path.join(dir, 'license.xml');
  if (opts.installed !== false) await fs.writeFile(file, await issue());
  const license = await LicenseService.open({ path: file, publicKey: pub, now: () => clock.now });
  const { api, port } = await startWith(settingWith({}, [{ addr: '127.0.0.1' }, { addr: '127.0.0.2', role: 'user' }]), licenseRoutes(license));
  t.teardown(() => api.close());
  return { dir, file, key, pub, clock, issue, license, port };
}

t.test('/get/license shows the installed license in the query envelope', async (t) => {
  const n = await node(t);
  const r = await request(n.port, '/get/license');
  t.equal(r.status, 200);
  t.equal(r.headers['content-type'], 'application/json; charset=utf-8');
  t.strictSame(r.json, {
    version: VERSION,
    method: 'license',
    status: 'OK',
    result: {
      Name: 'ACME', Type: 'Enterprise', SerialNumber: 'SN-1', Status: 'Available', AllowedFeatures: 'ALL',
      Validity: { NotBefore: '20260601000000Z', NotAfter: '20270601000000Z', RemainDays: 365 },
      State: 'Healthy',
    },
    reason: null,
  });
  n.clock.now += 400 * DAY;
  const expired = await request(n.port, '/get/license');
  t.equal(expired.status, 200, 'an expired license is still shown');
  t.match(expired.json.result, { Status: 'Expired', Validity: { RemainDays: 0 }, State: 'Inactive' });
});

t.test('a changed license is answered with its difference and applied only on confirmation', async (t) => {
  const n = await node(t);
  const before = await fs.readFile(n.file, 'utf8');
  const next = await n.issue({ serial: 'SN-2', days: 730 });
  const r = await request(n.port, '/setting/license/update', { headers: XML, body: next });
  t.equal(r.status, 200);
  t.equal(r.headers['content-type'], 'application/json; charset=utf-8');
  t.strictSame(Object.keys(r.json).sort(), ['diff', 'key']);
  t.match(r.json.key, /^[0-9a-f]{32}$/);
  t.strictSame(r.json.diff, {
    SerialNumber: { _asis_: 'SN-1', _tobe_: 'SN-2' },
    NotAfter: { _asis_: '20270601000000Z', _tobe_: '20280531000000Z' },
  }, 'one member per changed field');
  t.equal(await fs.readFile(n.file, 'utf8'), before, 'nothing is applied before confirmation');
  t.match((await request(n.port, '/get/license')).json.result, { SerialNumber: 'SN-1' });

  const done = await request(n.port, `/setting/license/update?confirm=${String(r.json.key)}`);
  t.equal(done.status, 200);
  t.strictSame(done.json, { message: 'Done' });
  t.equal(await fs.readFile(n.file, 'utf8'), next, 'the new license is in the license file');
  t.match((await request(n.port, '/get/license')).json.result, { SerialNumber: 'SN-2', Status: 'Available', Validity: { RemainDays: 730 } });
  const names = await fs.readdir(n.dir);
  t.notOk(names.some((f) => f.startsWith('.tmp-')), 'no temporary file is left behind');

  const again = await request(n.port, `/setting/license/update?confirm=${String(r.json.key)}`);
  t.strictSame(again.json, { message: 'Unknown or expired confirmation key' }, 'a key is used once');
});

t.test('an identical license gives an empty difference; confirming it changes nothing', async (t) => {
  const n = await node(t);
  const same = await fs.readFile(n.file, 'utf8');
  const r = await request(n.port, '/setting/license/update', { headers: XML, body: same });
  t.strictSame(r.json.diff, {});
  t.match(r.json.key, /^[0-9a-f]{32}$/);
  t.strictSame((await request(n.port, `/setting/license/update?confirm=${String(r.json.key)}`)).json, { message: 'Done' });
  t.match((await request(n.port, '/get/license')).json.result, { SerialNumber: 'SN-1', Status: 'Available' });
});

t.test('force applies a license from the multipart part "file" at once', async (t) => {
  const n = await node(t);
  const next = await n.issue({ name: 'ACME Two', features: 'CACHE' });
  const m = multipart('file', 'license.xml', next);
  const r = await request(n.port, '/setting/license/update?force=true', { headers: m.headers, body: m.body });
  t.strictSame(r.json, { message: 'Done' });
  t.equal(await fs.readFile(n.file, 'utf8'), next);
  t.match((await request(n.port, '/get/license')).json.result, { Name: 'ACME Two', AllowedFeatures: 'CACHE' });
});

t.test('a first license is offered against no license at all', async (t) => {
  const n = await node(t, { installed: false });
  t.match((await request(n.port, '/get/license')).json.result, { Status: 'None' });
  t.equal(n.license.state(), 'Inactive');
  const m = multipart('file', 'license.xml', await n.issue());
  const r = await request(n.port, '/setting/license/update', { headers: m.headers, body: m.body });
  t.strictSame((r.json.diff as Record<string, unknown>).Name, { _asis_: null, _tobe_: 'ACME' });
  t.equal(Object.keys(r.json.diff as object).length, 6, 'every field is new');
  t.strictSame((await request(n.port, `/setting/license/update?confirm=${String(r.json.key)}`)).json, { message: 'Done' });
  t.equal(n.license.state(), 'Healthy', 'the service state follows at once, without a restart');
});

t.test('text that is not XML is refused with the parser detail and changes nothing', async (t) => {
  const n = await node(t);
  const before = await fs.readFile(n.file, 'utf8');
  const r = await request(n.port, '/setting/license/update?force=true', { headers: XML, body: 'this is not a license' });
  t.equal(r.status, 200);
  t.strictSame(r.json, { message: 'Cannot parse license - line 1, column 1: text before the root element' });
  const broken = await request(n.port, '/setting/license/update', { headers: XML, body: '<License><Name>x</License>' });
  t.match(broken.json.message, /^Cannot parse license - line 1, column \d+: <\/License> closes <Name>$/);
  const m = multipart('other', 'license.xml', before);
  t.strictSame((await request(n.port, '/setting/license/update', { headers: m.headers, body: m.body })).json,
    { message: 'Cannot parse license - no multipart part named "file"' });
  t.match((await request(n.port, '/setting/license/update', { headers: { 'content-type': 'text/plain' }, body: before })).json.message,
    /^Cannot parse license - send the license as multipart\/form-data/);
  t.equal(await fs.readFile(n.file, 'utf8'), before);
});

t.test('a license with a bad signature is refused, with or without force', async (t) => {
  const n = await node(t);
  const before = await fs.readFile(n.file, 'utf8');
  const tampered = (await n.issue({ serial: 'SN-2' })).replace('<AllowedFeatures>ALL<', '<AllowedFeatures>EVERYTHING<');
  for (const q of ['', '?force=true']) {
    const r = await request(n.port, `/setting/license/update${q}`, { headers: XML, body: tampered });
    t.strictSame(r.json, { message: 'Invalid signature' }, q || 'without force');
  }
  const otherDir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-license-other-'));
  t.teardown(() => fs.rm(otherDir, { recursive: true, force: true }));
  const other = await keygen(otherDir);
  const foreign = (await issueLicense({ key: other.key, name: 'X', type: 'T', serial: 'S', days: 10, now: n.clock.now })).xml;
  t.strictSame((await request(n.port, '/setting/license/update?force=true', { headers: XML, body: foreign })).json, { message: 'Invalid signature' });
  t.equal(await fs.readFile(n.file, 'utf8'), before);
});

t.test('an expired license is refused, also when it expires while waiting for confirmation', async (t) => {
  const n = await node(t);
  const before = await fs.readFile(n.file, 'utf8');
  const old = await n.issue({ serial: 'OLD', days: 30, at: n.clock.now - 60 * DAY });
  t.strictSame((await request(n.port, '/setting/license/update?force=true', { headers: XML, body: old })).json, { message: 'Expired license' });
  t.strictSame((await request(n.port, '/setting/license/update', { headers: XML, body: old })).json, { message: 'Expired license' });

  const later = await n.issue({ serial: 'LATER', days: 1, at: n.clock.now + 5 * DAY });
  t.match((await request(n.port, '/setting/license/update', { headers: XML, body: later })).json,
    { message: /^License not yet valid \(NotBefore \d{14}Z\)$/ }, 'a license whose period has not begun is refused');

  // Five minutes of validity, confirmed six minutes later (the key itself lives ten).
  const short = await n.issue({ serial: 'SHORT', days: 5 / 1440 });
  const offered = await request(n.port, '/setting/license/update', { headers: XML, body: short });
  t.match(offered.json.key, /^[0-9a-f]{32}$/);
  n.clock.now += 6 * 60_000;
  t.strictSame((await request(n.port, `/setting/license/update?confirm=${String(offered.json.key)}`)).json, { message: 'Expired license' });
  t.equal(await fs.readFile(n.file, 'utf8'), before);
});

t.test('confirmation keys expire, and applying one license voids the other offers', async (t) => {
  const n = await node(t);
  const a = await request(n.port, '/setting/license/update', { headers: XML, body: await n.issue({ serial: 'A' }) });
  const b = await request(n.port, '/setting/license/update', { headers: XML, body: await n.issue({ serial: 'B' }) });
  t.strictSame((await request(n.port, `/setting/license/update?confirm=${String(a.json.key)}`)).json, { message: 'Done' });
  t.strictSame((await request(n.port, `/setting/license/update?confirm=${String(b.json.key)}`)).json,
    { message: 'Unknown or expired confirmation key' }, 'B was offered as a difference against the replaced license');
  const c = await request(n.port, '/setting/license/update', { headers: XML, body: await n.issue({ serial: 'C' }) });
  n.clock.now += 11 * 60_000;
  t.strictSame((await request(n.port, `/setting/license/update?confirm=${String(c.json.key)}`)).json, { message: 'Unknown or expired confirmation key' });
  t.strictSame((await request(n.port, '/setting/license/update')).json, { message: 'confirm=<key> is required (the key of a license update)' });
  t.match((await request(n.port, '/get/license')).json.result, { SerialNumber: 'A' });
});

t.test('license update needs enableSetting; /get/license only enableGet', async (t) => {
  const n = await node(t);
  const user = { from: '127.0.0.2' };
  t.equal((await request(n.port, '/get/license', user)).status, 200);
  const r = await request(n.port, '/setting/license/update?force=true', { ...user, headers: XML, body: await n.issue({ serial: 'NO' }) });
  t.equal(r.status, 401);
  t.equal((await request(n.port, '/setting/license/update?confirm=x', user)).status, 401);
  t.match((await request(n.port, '/get/license')).json.result, { SerialNumber: 'SN-1' });
});
