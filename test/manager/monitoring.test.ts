import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { parseCiphers } from '../../lib/manager/monitoring/ssl.js';
import { call, makeSetting, startApi, VERSION } from './fixtures/helpers.js';

const allowAll = { allowList: [{ addr: '127.0.0.1' }] };

t.test('hwinfo describes OS, CPU, memory, NICs and disks with the members of document 1', async (t) => {
  const { api, port } = await startApi(makeSetting(allowAll));
  t.teardown(() => api.close());
  const r = await call(port, '/monitoring/hwinfo');
  t.equal(r.status, 200);
  t.equal(r.json.method, 'hwinfo');
  t.equal(r.json.status, 'OK');
  const hw = r.json.result as Record<string, any>;
  t.equal(hw.OS, `${os.type()} ${os.release()}`);
  t.equal(hw.ProductVer, VERSION);
  t.type(hw.Issue, 'string');
  t.notMatch(hw.Issue, /\\[nl]/, 'getty escapes of /etc/issue are removed');
  t.match(hw.Memory, /^\d+$/, 'memory is bytes as a string');
  t.equal(Number(hw.Memory), os.totalmem(), 'MemTotal of /proc/meminfo');
  t.equal(hw.CPU.ProcCount, os.cpus().length);
  t.type(hw.CPU.Model, 'string');
  t.type(hw.CPU.MHz, 'string');
  t.type(hw.CPU.Cache, 'string');
  const aes = /^flags\s*:.*\baes\b/m.test(await fs.readFile('/proc/cpuinfo', 'utf8'));
  t.equal(hw.CPU['AES-NI'], aes ? 'Supported' : 'Not supported');
  t.ok(Array.isArray(hw.NIC));
  for (const nic of hw.NIC) t.strictSame(Object.keys(nic).sort(), ['Dev', 'IP', 'MAC', 'Model']);
  t.notOk(hw.NIC.some((n: { Dev: string }) => n.Dev === 'lo'), 'loopback is not a NIC');
  t.ok(Array.isArray(hw.Disk));
  for (const d of hw.Disk) {
    t.strictSame(Object.keys(d).sort(), ['Dev', 'Model', 'Total', 'Usage']);
    t.match(d.Total, /^(\d+|-)$/);
    t.match(d.Usage, /^(\d+|-)$/);
    t.notMatch(d.Dev, /^(loop|ram|zram)/);
  }
});

t.test('ssl expands HIGH:!aNULL into cipher entries with the six fields', async (t) => {
  const { api, port } = await startApi(makeSetting(allowAll));
  t.teardown(() => api.close());
  const r = await call(port, `/monitoring/ssl?ciphersuite=${encodeURIComponent('HIGH:!aNULL')}`);
  t.equal(r.status, 200);
  t.equal(r.json.method, 'ssl');
  t.equal(r.json.status, 'OK');
  const list = r.json.result as Array<Record<string, string>>;
  t.ok(list.length > 5);
  for (const c of list) t.strictSame(Object.keys(c), ['Name', 'Ver', 'Kx', 'Au', 'Enc', 'Mac']);
  t.ok(list.some((c) => c.Name === 'ECDHE-RSA-AES256-GCM-SHA384' && c.Ver === 'TLSv1.2' && c.Kx === 'ECDH' && c.Au === 'RSA'));
  t.notOk(list.some((c) => c.Au === 'None'), '!aNULL removed anonymous suites');
  const short = await call(port, '/monitoring/ssl?cs=ECDHE-RSA-AES128-GCM-SHA256');
  t.ok((short.json.result as Array<{ Name: string }>).some((c) => c.Name === 'ECDHE-RSA-AES128-GCM-SHA256'), '`cs` is accepted too');
});

t.test('ssl answers 400 for a bogus expression, a missing one, or an option in disguise', async (t) => {
  const { api, port } = await startApi(makeSetting(allowAll));
  t.teardown(() => api.close());
  const bogus = await call(port, '/monitoring/ssl?ciphersuite=NOTACIPHER');
  t.equal(bogus.status, 400);
  t.equal(bogus.json.status, 'fail');
  t.match(bogus.json.reason, /^invalid CipherSuite "NOTACIPHER"/);
  const missing = await call(port, '/monitoring/ssl');
  t.equal(missing.status, 400);
  t.equal(missing.json.reason, 'ciphersuite parameter is required');
  t.equal((await call(port, '/monitoring/ssl?cs=-help')).status, 400);
  t.equal((await call(port, `/monitoring/ssl?cs=${encodeURIComponent('HIGH;rm -rf /')}`)).status, 400);
});

t.test('parseCiphers reads the columns of openssl ciphers -v', async (t) => {
  const text = [
    'TLS_AES_256_GCM_SHA384         TLSv1.3 Kx=any      Au=any   Enc=AESGCM(256)            Mac=AEAD',
    'AES128-SHA                     SSLv3   Kx=RSA      Au=RSA   Enc=AES(128)               Mac=SHA1',
    '',
  ].join('\n');
  t.strictSame(parseCiphers(text), [
    { Name: 'TLS_AES_256_GCM_SHA384', Ver: 'TLSv1.3', Kx: 'any', Au: 'any', Enc: 'AESGCM(256)', Mac: 'AEAD' },
    { Name: 'AES128-SHA', Ver: 'SSLv3', Kx: 'RSA', Au: 'RSA', Enc: 'AES(128)', Mac: 'SHA1' },
  ]);
});

t.test('geoiplist lists the .mmdb files of env.geoip.path with their sizes', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-geoip-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  await fs.writeFile(path.join(dir, 'GeoLite2-Country.mmdb'), Buffer.alloc(1234));
  await fs.writeFile(path.join(dir, 'GeoLite2-City.mmdb'), Buffer.alloc(10));
  await fs.writeFile(path.join(dir, 'README.txt'), 'not a database');
  const setting = makeSetting(allowAll);
  (setting.env as Record<string, unknown>).geoip = { path: dir };
  const { api, port } = await startApi(setting);
  t.teardown(() => api.close());
  const r = await call(port, '/monitoring/geoiplist');
  t.equal(r.status, 200);
  t.strictSame(r.json, {
    version: VERSION,
    method: 'geoiplist',
    status: 'OK',
    result: { path: dir, files: [{ file: 'GeoLite2-City.mmdb', size: 10 }, { file: 'GeoLite2-Country.mmdb', size: 1234 }] },
    reason: null,
  });
});

t.test('geoiplist is 404 when no GeoIP directory is configured or it does not exist', async (t) => {
  const setting = makeSetting(allowAll);
  const { api, port } = await startApi(setting);
  t.teardown(() => api.close());
  const r = await call(port, '/monitoring/geoiplist');
  t.equal(r.status, 404);
  t.equal(r.json.status, 'fail');
  t.equal(r.json.method, 'geoiplist');
  t.match(r.json.reason, /local GeoIP not configured/);
  (setting.env as Record<string, unknown>).geoip = { path: '/nonexistent/geoip' };
  const missing = await call(port, '/monitoring/geoiplist');
  t.equal(missing.status, 404);
  t.match(missing.json.reason, /\/nonexistent\/geoip cannot be read \(ENOENT\)/);
});

t.test('the user role reads every monitoring endpoint', async (t) => {
  const { api, port } = await startApi(makeSetting({ allowList: [{ addr: '127.0.0.4', role: 'user' }] }));
  t.teardown(() => api.close());
  for (const p of ['/monitoring/vhostslist', '/monitoring/origin', '/monitoring/hwinfo', '/monitoring/ssl?cs=HIGH']) {
    t.equal((await call(port, p, { from: '127.0.0.4' })).status, 200, p);
  }
});
