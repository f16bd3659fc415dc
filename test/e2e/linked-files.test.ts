// Black-box: linked files of an uploaded setting (certificates, basehost files) are written only
// under env.home or a directory of env.linkedFileDirs. A setting naming any other place (an
// absolute path, a `..` escape, a symlink out of env.home) is refused with the JSON path of the
// field, and nothing is written there.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { freePort } from '../helpers/ports.js';
import { startServer, type RunningServer } from '../helpers/server.js';
import { multipart } from '../lifecycle/fixtures/helpers.js';
import { call, LOCAL_LOGS, type Answer } from '../lifecycle/fixtures/node.js';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n';

async function node(t: Test, env: Record<string, unknown> = {}): Promise<RunningServer> {
  const port = await freePort();
  const server = await startServer([{ name: 'a.com', listen: `127.0.0.1:${port}`, origin: { address: ['127.0.0.1:9'] } }], {
    extra: { env: { ...LOCAL_LOGS.env, ...env } },
  });
  t.teardown(() => server.stop());
  return server;
}

/** A directory outside the node's env.home that the test removes afterwards. */
async function outside(t: Test): Promise<string> {
  const dir = path.join(os.tmpdir(), `svc-outside-${randomBytes(6).toString('hex')}`);
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}

async function exists(p: string): Promise<boolean> {
  return fs.lstat(p).then(() => true, () => false);
}

type Doc = { env: { management: { api: Record<string, unknown> } }; hosting: Array<Record<string, unknown>> };

async function runningDoc(server: RunningServer): Promise<Doc> {
  return JSON.parse((await call(server.apiPort, '/setting/setting.json')).text) as Doc;
}

/** The management TLS certificate and key of a setting, an env change (it waits for a restart). */
function withApiCert(d: Doc, cert: string): Doc {
  d.env.management.api.https = { cert, key: 'tls/api.key', options: { listen: '127.0.0.1:1' } };
  return d;
}

function upload(server: RunningServer, route: string, d: Doc, files: Record<string, string>): Promise<Answer> {
  const parts = [{ filename: 'setting.json', data: JSON.stringify(d) }, ...Object.entries(files).map(([filename, data]) => ({ filename, data }))];
  const m = multipart(parts.map((p) => ({ name: 'settingFile', ...p })));
  return call(server.apiPort, route, { body: m.body, type: m.contentType });
}

t.test('a linked file outside env.home is refused with the JSON path of its field and never written', async (t) => {
  const server = await node(t);
  const away = await outside(t);
  const evil = path.join(away, 'evil.pem');
  const files = { 'evil.pem': PEM, 'api.key': 'key' };

  const absolute = await upload(server, '/setting/upload', withApiCert(await runningDoc(server), evil), files);
  t.equal(absolute.status, 500);
  t.match(absolute.json, { status: 'fail', error: 4 }, 'an absolute path elsewhere: content wrong');
  t.match(absolute.json.reason, /^env\.management\.api\.https\.cert: /, 'the reason starts with the JSON path');
  t.match(absolute.json.reason, `${evil} is outside env.home and env.linkedFileDirs (${server.dir})`, 'and says why');
  t.notOk(await exists(away), 'neither the file nor its directory was created');

  const validate = await call(server.apiPort, '/setting/validate', { body: JSON.stringify(withApiCert(await runningDoc(server), evil)) });
  t.match(validate.json, { status: 'fail', error: 4, reason: /^env\.management\.api\.https\.cert: .* is outside env\.home/ }, 'a JSON validation refuses it too');

  const escape = await runningDoc(server);
  escape.hosting[0]!.https = [{ cert: `../${path.basename(away)}/evil.pem`, key: 'tls/a.key' }];
  const dots = await upload(server, '/setting/upload', escape, { ...files, 'a.key': 'key' });
  t.match(dots.json, { status: 'fail', error: 4, reason: /^hosting\[0\]\.https\[0\]\.cert: .* is outside env\.home/ }, 'a `..` escape out of env.home');
  t.notOk(await exists(away), 'nothing was written above env.home');

  // A directory inside env.home that is a symlink to somewhere else.
  await fs.mkdir(away, { recursive: true });
  await fs.symlink(away, path.join(server.dir, 'certs'));
  const viaLink = await upload(server, '/setting/upload', withApiCert(await runningDoc(server), 'certs/evil.pem'), files);
  t.match(viaLink.json, { status: 'fail', error: 4, reason: /^env\.management\.api\.https\.cert: .* through a symlink/ }, 'a symlink out of env.home');
  t.strictSame(await fs.readdir(away), [], 'nothing was written through the symlink');

  const base = await runningDoc(server);
  base.hosting[0]!.mode = { basehost: evil };
  const basehost = await upload(server, '/setting/upload', base, { 'evil.pem': '{}' });
  t.match(basehost.json, { status: 'fail', error: 4, reason: /^hosting\[0\]\.mode\.basehost: .* is outside env\.home/ }, 'a basehost file elsewhere');
  t.strictSame(await fs.readdir(away), [], 'no basehost file was written');
});

t.test('a linked file in a directory of env.linkedFileDirs is accepted and installed there', async (t) => {
  const away = await outside(t);
  await fs.mkdir(away, { recursive: true });
  const server = await node(t, { linkedFileDirs: [away] });
  const cert = path.join(away, 'api.pem');
  const r = await upload(server, '/setting/upload', withApiCert(await runningDoc(server), cert), { 'api.pem': PEM, 'api.key': 'key' });
  t.match(r.json, { status: 'OK', error: 0, result: { applied: true, artifact: true } }, r.text);
  t.equal(await fs.readFile(cert, 'utf8'), PEM, 'the certificate is written in the listed directory');
  t.equal(await fs.readFile(path.join(server.dir, 'tls/api.key'), 'utf8'), 'key', 'and the key under env.home');
});
