import fs from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { CERT, doc, host, KEY, makeTgz, postJson, postMultipart, request, startFixture, VERSION } from './fixtures/helpers.js';

const withCert = (port: number): Record<string, unknown> => doc({
  port,
  hosting: [host('a.example.com', '10.0.0.1:80', { https: [{ cert: 'cert/a.pem', key: 'cert/a.key' }] })],
});

t.test('a JSON upload is applied and answered with applied and artifact', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const d = doc({ port: f.port, hosting: [host('a.example.com', '10.0.0.3:80')] });
  const r = await postJson(f.port, '/setting/upload', d);
  t.equal(r.status, 200);
  t.strictSame(r.json, { version: VERSION, method: '/setting/upload', status: 'OK', result: { applied: true, artifact: false, restartPending: [] }, reason: null, error: 0 });
  t.strictSame(f.rt.applied[0]!.setting.hosting.map((h) => h.origin?.address), [['10.0.0.3:80']]);
  t.strictSame(JSON.parse(await fs.readFile(f.settingPath, 'utf8')), d, 'setting.json is the uploaded one');
  const imp = await postJson(f.port, '/setting/import', doc({ port: f.port, hosting: [host('z.example.com')] }));
  t.equal(imp.json.method, '/setting/import');
  t.equal(imp.json.status, 'OK', 'import is the same as upload');
  t.strictSame(f.lc.running().hosting.map((h) => h.name), ['z.example.com']);
});

t.test('a multipart tgz package with setting.json and certificate files is unpacked and applied', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const pkg = await makeTgz({ 'setting.json': JSON.stringify(withCert(f.port)), 'cert/a.pem': CERT, 'cert/a.key': KEY });
  const r = await postMultipart(f.port, '/setting/upload', [{ name: 'settingFile', filename: 'setting.tgz', data: pkg }]);
  t.equal(r.status, 200, JSON.stringify(r.json));
  t.equal(r.json.status, 'OK');
  t.equal(await fs.readFile(path.join(f.dir, 'cert/a.pem'), 'utf8'), CERT, 'linked files are installed under env.home');
  t.equal(await fs.readFile(path.join(f.dir, 'cert/a.key'), 'utf8'), KEY);
  t.strictSame(f.rt.applied[0]!.setting.hosting[0]!.https, [{ cert: 'cert/a.pem', key: 'cert/a.key' }]);
});

t.test('multipart plain file parts carry setting.json and the linked files by name', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const r = await postMultipart(f.port, '/setting/upload', [
    { name: 'settingFile', filename: 'setting.json', data: JSON.stringify(withCert(f.port)) },
    { name: 'settingFile', filename: 'a.pem', data: CERT },
    { name: 'settingFile', filename: 'a.key', data: KEY },
  ]);
  t.equal(r.json.status, 'OK', JSON.stringify(r.json));
  t.equal(await fs.readFile(path.join(f.dir, 'cert/a.pem'), 'utf8'), CERT, 'a flat file part goes where the setting names it');
});

t.test('the multipart part name follows env.management.api.multipartName', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const d = doc({ port: f.port, hosting: [host('a.example.com')] });
  const wrong = await postMultipart(f.port, '/setting/upload', [{ name: 'file', filename: 'setting.json', data: JSON.stringify(d) }]);
  t.equal(wrong.status, 500);
  t.equal(wrong.json.error, 1, 'no part of the configured name: the package is missing');
  t.equal(wrong.json.status, 'fail');
});

t.test('upload failures carry error codes 1 to 5', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const check = async (name: string, r: Promise<{ status: number; json: Record<string, unknown> }>, code: number, reason: RegExp): Promise<void> => {
    const a = await r;
    t.equal(a.status, 500, name);
    t.equal(a.json.status, 'fail', name);
    t.equal(a.json.error, code, name);
    t.equal(a.json.version, VERSION);
    t.equal(a.json.method, '/setting/upload');
    t.match(a.json.reason, reason, name);
  };
  await check('empty package', postMultipart(f.port, '/setting/upload', [{ name: 'settingFile', filename: 's.tgz', data: '' }]), 1, /no setting package/);
  await check('broken gzip', postMultipart(f.port, '/setting/upload', [{ name: 'settingFile', filename: 's.tgz', data: Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3]) }]), 2, /cannot unpack/);
  await check('JSON syntax', postJson(f.port, '/setting/upload', '{"meta": {'), 3, /not valid JSON/);
  const noJson = await makeTgz({ 'other.txt': 'x' });
  await check('package without setting.json', postMultipart(f.port, '/setting/upload', [{ name: 'settingFile', filename: 's.tgz', data: noJson }]), 3, /setting\.json/);
  const bad = doc({ port: f.port, hosting: [{ name: 'a.example.com', origin: { address: 'not-a-list' } }] });
  await check('content', postJson(f.port, '/setting/upload', bad), 4, /hosting\[0\]\.origin\.address/);
  await check('missing certificate', postJson(f.port, '/setting/upload', withCert(f.port)), 5, /^cert\/a\.pem$/);
  const partial = await makeTgz({ 'setting.json': JSON.stringify(withCert(f.port)), 'cert/a.pem': CERT });
  await check('package without the key', postMultipart(f.port, '/setting/upload', [{ name: 'settingFile', filename: 's.tgz', data: partial }]), 5, /^cert\/a\.key$/);
  const apiTls = doc({ port: f.port });
  ((apiTls.env as Record<string, Record<string, Record<string, unknown>>>).management!.api!).https = { cert: 'tls/api.pem', key: 'tls/api.key', options: { listen: '127.0.0.1:1' } };
  await check('missing management certificate', postJson(f.port, '/setting/upload', apiTls), 5, /^tls\/api\.pem$/);
  const base = doc({ port: f.port, hosting: [{ name: 'a.example.com', mode: { basehost: 'hosts/base.json' } }] });
  await check('missing basehost file', postJson(f.port, '/setting/upload', base), 5, /^hosts\/base\.json$/);
  t.equal(f.rt.applied.length, 0, 'nothing was applied');
});

t.test('a basehost file in the package is used and installed beside setting.json', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const d = doc({ port: f.port, hosting: [{ name: 'a.example.com', mode: { basehost: 'hosts/base.json' } }] });
  const pkg = await makeTgz({ 'setting.json': JSON.stringify(d), 'hosts/base.json': JSON.stringify({ origin: { address: ['10.9.9.9:80'] } }) });
  const r = await postMultipart(f.port, '/setting/upload', [{ name: 'settingFile', filename: 'p.tgz', data: pkg }]);
  t.equal(r.json.status, 'OK', JSON.stringify(r.json));
  t.strictSame(f.rt.applied[0]!.setting.hosting[0]!.origin?.address, ['10.9.9.9:80']);
  t.ok(await fs.stat(path.join(f.dir, 'hosts/base.json')));
});

t.test('an upload without Content-Length is refused with 411, another content type with 415', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const chunked = await request(f.port, 'POST', '/setting/upload', { headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, body: '{}', chunked: true });
  t.equal(chunked.status, 411);
  t.equal(chunked.json.error, 1);
  const text = await request(f.port, 'POST', '/setting/upload', { headers: { 'content-type': 'text/plain' }, body: '{}' });
  t.equal(text.status, 415);
  t.equal(text.json.status, 'fail');
});

t.test('validate reports a bad field with its JSON path and applies nothing', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const before = await fs.readFile(f.settingPath, 'utf8');
  const bad = doc({ port: f.port, meta: { setting: { deploy: 'sometimes' } } });
  const r = await postJson(f.port, '/setting/validate', bad);
  t.equal(r.status, 500);
  t.equal(r.json.error, 4);
  t.equal(r.json.method, '/setting/validate');
  t.match(r.json.reason, /meta\.setting\.deploy/);
  const good = await postJson(f.port, '/setting/validate', doc({ port: f.port, hosting: [host('new.example.com')] }));
  t.strictSame(good.json, { version: VERSION, method: '/setting/validate', status: 'OK', result: { applied: false, artifact: false, restartPending: [] }, reason: null, error: 0 });
  t.equal(f.rt.applied.length, 0);
  t.equal(await fs.readFile(f.settingPath, 'utf8'), before, 'setting.json is untouched');
});

t.test('validate of a JSON body checks linked files for syntax only; a package must hold them', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const json = await postJson(f.port, '/setting/validate', withCert(f.port));
  t.equal(json.json.status, 'OK', 'certificates that do not exist yet are fine in a JSON validation');
  const pkg = await makeTgz({ 'setting.json': JSON.stringify(withCert(f.port)) });
  const r = await postMultipart(f.port, '/setting/validate', [{ name: 'settingFile', filename: 's.tgz', data: pkg }]);
  t.equal(r.json.error, 5);
  t.equal(r.json.reason, 'cert/a.pem');
  t.strictSame(r.json.issues, [{ path: 'hosting[0].https[0].cert', message: 'linked file not found: cert/a.pem' }], 'the member that names it');
  const env = await postJson(f.port, '/setting/validate', doc({ port: f.port, env: { cache: { memorySize: '8mb' } } }));
  t.strictSame(env.json.result, { applied: false, artifact: true, restartPending: ['env.cache.memorySize'] }, 'validate tells that the env part would wait for a restart');
});
