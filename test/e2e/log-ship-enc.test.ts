// Black-box: a log repository whose keys are `enc:` values from /command/encryptpassword. The
// real server gets a license (generated and installed through the API, as an operator does),
// encrypts s3rver's key pair, is started again on a setting whose S3 repository carries them,
// rolls its access log by size and ships the rolled file on the repository's cron (every
// minute) to a real S3-compatible server (s3rver: it refuses an unknown access key, so the
// `enc:` text itself is refused; the signature is checked in test/log/repository-enc.test.ts).
// The minute cron makes this test wait up to about a minute.
import fs from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { Agent, request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startS3, S3_KEYS } from '../helpers/s3.js';
import { baseSetting, operatorRole, startServer, startWithSetting, writeSetting } from '../helpers/server.js';
import { pollUntil } from '../helpers/wait.js';
import { call, svc } from '../lifecycle/fixtures/node.js';

const origin = await new TestOrigin().start();
t.teardown(() => origin.stop());
const s3 = await startS3(['enc-logs']);
t.teardown(() => s3.stop());

t.test('a repository with enc: keys made by encryptpassword ships the rolled access log to the store', async (t) => {
  const port = await freePort();
  const hosts = [{ name: 'one.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }];
  const first = await startServer(hosts, { extra: operatorRole });
  t.teardown(() => first.stop());
  t.equal((await svc(['license', 'keygen', '--out', first.dir])).code, 0);
  const xml = path.join(first.dir, 'SN-1.xml');
  const signed = await svc(['license', 'sign', '--key', path.join(first.dir, 'license.key'), '--name', 'ACME', '--type', 'Enterprise', '--serial', 'SN-1', '--features', 'ALL', '--days', '30', '--out', xml]);
  t.equal(signed.code, 0, signed.stderr);
  t.equal((await call(first.apiPort, '/setting/license/update?force=true', { body: await fs.readFile(xml), type: 'application/xml' })).json.message, 'Done');
  const encrypt = async (plain: string): Promise<string> => (await call(first.apiPort, `/command/encryptpassword?plain=${plain}`)).text;
  const accessKey = await encrypt(S3_KEYS.accessKey);
  const secretKey = await encrypt(S3_KEYS.secretKey);
  t.match(accessKey, /^enc:/);
  t.equal(await first.stop(), 0);

  await writeSetting(first.dir, baseSetting(hosts, first.basePort, {
    extra: {
      env: { ...operatorRole.env, log: { ...operatorRole.env.log, repository: { list: [
        { name: 's3', type: 'cloudA-objstore', rolling: '* *', path: '/{logtype}/{domain}/{timestamp}.log.gz', compression: { enable: true },
          endpoint: { bucket: 'enc-logs', region: 'us-east-1', domain: s3.url, accessKey, secretKey } },
      ] } } },
      functions: { operations: { log: { meta: { dir: 'logs' }, access: { loopback: true, rolling: { size: 1 }, compression: true, backup: ['s3'] }, origin: { enable: false } } } },
    },
  }, first.apiPort));
  const server = await startWithSetting(first.dir, first.settingPath, first.basePort, undefined, first.apiPort);
  t.teardown(() => server.stop());

  // ~7 KB per access line: 200 requests are about 1.4 MB, one roll at 1 MB.
  const q = 'q'.repeat(7000);
  const dispatcher = new Agent({ connections: 4 });
  for (let i = 0; i < 200; i++) await (await request(`http://127.0.0.1:${port}/p${i}?${q}`, { headers: { host: 'one.test' }, dispatcher })).body.text();
  await dispatcher.close();
  const keys = await pollUntil(() => s3.list('enc-logs'), (ks) => ks.length > 0, { timeoutMs: 90_000, intervalMs: 500 });
  t.equal(keys.length, 1, `the rolled access log arrived (${keys.join(' ')})`);
  if (keys.length === 0) return;
  t.match(keys[0], /^access\/one\.test\/\d{14}\.log\.gz$/);
  const lines = gunzipSync(await s3.get('enc-logs', keys[0]!)).toString().split('\n').filter((l) => l !== '' && !l.startsWith('#'));
  t.ok(lines.length >= 100 && lines.every((l) => l.includes('/p')), `its lines (${lines.length})`);
});
