// Black-box: setting packages that unpack too large (a gzip bomb) or hold too many files are
// refused with `error: 2` through /setting/validate and /setting/upload, and every refused
// upload leaves the node as it was: same running setting, nothing left in state/tmp, the API
// and the data port still answering.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import * as tar from 'tar';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer, type RunningServer } from '../helpers/server.js';
import { multipart } from '../lifecycle/fixtures/helpers.js';
import { call, fetchHost, LOCAL_LOGS, type Answer } from '../lifecycle/fixtures/node.js';

const origin = await new TestOrigin().start();
t.teardown(() => origin.stop());

async function node(t: Test, env: Record<string, unknown> = {}): Promise<{ server: RunningServer; port: number }> {
  const port = await freePort();
  const server = await startServer([{ name: 'a.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }], {
    extra: { env: { ...LOCAL_LOGS.env, ...env } },
  });
  t.teardown(() => server.stop());
  return { server, port };
}

/**
 * A gzipped tar of the files; a file given as a number is that many zero bytes, written sparse
 * and streamed through gzip, so a 300 MiB member costs neither disk nor memory here.
 */
async function tgz(files: Record<string, string | Buffer | number>): Promise<Buffer> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-pkg-'));
  try {
    for (const [name, content] of Object.entries(files)) {
      if (typeof content === 'number') {
        const h = await fs.open(path.join(dir, name), 'w');
        await h.truncate(content);
        await h.close();
      } else await fs.writeFile(path.join(dir, name), content);
    }
    const chunks: Buffer[] = [];
    for await (const c of tar.create({ gzip: true, cwd: dir, portable: true }, Object.keys(files))) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

function post(server: RunningServer, route: string, parts: Array<{ filename: string; data: Buffer | string }>): Promise<Answer> {
  const m = multipart(parts.map((p) => ({ name: 'settingFile', ...p })));
  return call(server.apiPort, route, { body: m.body, type: m.contentType });
}

/** Entries of the node's state/tmp work directory (none or missing: 0). */
async function tmpEntries(server: RunningServer): Promise<string[]> {
  return fs.readdir(path.join(server.dir, 'state', 'tmp')).catch(() => []);
}

// The node with the default limits serves the first and the last test (each refused upload
// leaves it as it was); the one with its own limits is started for its test.
const plain = await node(t);

t.test('a gzip bomb is refused with error 2 by validate and by upload; the node keeps its setting and keeps serving', async (t) => {
  const { server, port } = plain;
  const running = (await call(server.apiPort, '/setting/setting.json')).text;
  const historyBefore = (await call(server.apiPort, '/setting/history')).text;
  // About 300 KB on the wire, 300 MiB unpacked: beyond the 64 MiB default.
  const bomb = await tgz({ 'setting.json': running, 'zero.bin': 300 * 1024 * 1024 });
  t.ok(bomb.length < 1024 * 1024, `the bomb is small on the wire (${bomb.length} bytes)`);

  for (const route of ['/setting/validate', '/setting/upload']) {
    const r = await post(server, route, [{ filename: 'bomb.tgz', data: bomb }]);
    t.equal(r.status, 500, `${route}: 500`);
    t.match(r.json, { method: route, status: 'fail', error: 2 }, `${route}: the envelope of an unpacking failure`);
    t.match(r.json.reason, /more than 64 MiB/, `${route}: the reason names the limit`);
  }
  t.equal(server.proc.exitCode, null, 'the primary is still running');
  t.equal((await call(server.apiPort, '/setting/setting.json')).text, running, 'the running setting is unchanged');
  t.equal((await call(server.apiPort, '/setting/history')).text, historyBefore, 'no history entry was made');
  t.strictSame(await tmpEntries(server), [], 'nothing is left in state/tmp');
  t.equal((await fetchHost(port, 'a.com', '/after')).status, 200, 'the data port still serves');
});

t.test('env.management.api.upload limits the unpacked size and the file count; a package within both is accepted', async (t) => {
  const { server } = await node(t, { management: { api: { upload: { maxUnpackedSize: '1mb', maxFiles: 4 } } } });
  const running = (await call(server.apiPort, '/setting/setting.json')).text;
  const big = await post(server, '/setting/validate', [{ filename: 'p.tgz', data: await tgz({ 'setting.json': running, 'big.bin': randomBytes(2 * 1024 * 1024) }) }]);
  t.match(big.json, { status: 'fail', error: 2, reason: /more than 1 MiB/ }, 'a 2 MiB member is over maxUnpackedSize 1mb');
  const files: Record<string, string> = { 'setting.json': running };
  for (let i = 0; i < 5; i++) files[`f${i}.txt`] = 'x';
  const many = await post(server, '/setting/validate', [{ filename: 'p.tgz', data: await tgz(files) }]);
  t.match(many.json, { status: 'fail', error: 2, reason: /more than 4 files/ }, 'six files are over maxFiles 4');
  const parts = await post(server, '/setting/validate', Object.entries(files).map(([filename, data]) => ({ filename, data })));
  t.match(parts.json, { status: 'fail', error: 2, reason: /more than 4 files/ }, 'so are six plain file parts');
  const fine = await post(server, '/setting/validate', [{ filename: 'p.tgz', data: await tgz({ 'setting.json': running, 'small.bin': randomBytes(512 * 1024) }) }]);
  t.match(fine.json, { status: 'OK', error: 0 }, 'a package within both limits is accepted');
  t.strictSame(await tmpEntries(server), [], 'nothing is left in state/tmp');
});

t.test('refused uploads of every kind leave nothing in state/tmp', async (t) => {
  const { server } = plain;
  const running = (await call(server.apiPort, '/setting/setting.json')).text;
  const before = await tmpEntries(server);
  const answers: Answer[] = [];
  // Several files and none of them setting.json (error 1), three times.
  for (let i = 0; i < 3; i++) {
    answers.push(await post(server, '/setting/upload', [{ filename: 'a.pem', data: 'x' }, { filename: 'b.key', data: 'y' }]));
  }
  // A broken gzip (2), a package without setting.json (3), wrong content (4), a missing linked file (5).
  answers.push(await post(server, '/setting/upload', [{ filename: 'p.tgz', data: Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3]) }]));
  answers.push(await post(server, '/setting/upload', [{ filename: 'p.tgz', data: await tgz({ 'other.txt': 'x' }) }]));
  const bad = JSON.parse(running) as { hosting: Array<Record<string, unknown>> };
  bad.hosting[0]!.origin = { address: 'not-a-list' };
  answers.push(await post(server, '/setting/upload', [{ filename: 'setting.json', data: JSON.stringify(bad) }, { filename: 'x.txt', data: 'x' }]));
  const cert = JSON.parse(running) as { hosting: Array<Record<string, unknown>> };
  cert.hosting[0]!.https = [{ cert: 'tls/a.pem', key: 'tls/a.key' }];
  answers.push(await post(server, '/setting/upload', [{ filename: 'p.tgz', data: await tgz({ 'setting.json': JSON.stringify(cert) }) }]));
  t.strictSame(answers.map((a) => a.json.error), [1, 1, 1, 2, 3, 4, 5], 'each upload was refused with its error code');
  t.strictSame(await tmpEntries(server), before, 'state/tmp holds what it held before');
  t.equal((await call(server.apiPort, '/setting/setting.json')).text, running, 'the running setting is unchanged');
});
