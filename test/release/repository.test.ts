// A release repository read from a directory and over HTTP (the same files), and the package
// checks: a good package passes; a missing checksum or signature, an altered byte or another
// key's signature is refused, each saying why.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { compareVersions, packageProblem, sha256Line, sign, tarballName } from '../../lib/release/format.js';
import { openRepository } from '../../lib/release/repository.js';

t.test('a directory and an HTTP repository list the same versions and files', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-repo-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  await fs.writeFile(path.join(dir, 'index.json'), JSON.stringify({ versions: ['0.1.0', '0.2.0', '../evil', 3] }));
  await fs.writeFile(path.join(dir, tarballName('0.2.0')), 'tgz');
  const server = http.createServer((req, res) => {
    fs.readFile(path.join(dir, path.basename(req.url ?? ''))).then((b) => res.end(b), () => { res.statusCode = 404; res.end(); });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/repo`;
  for (const repo of [openRepository(path.basename(dir), path.dirname(dir)), openRepository(url, '/nowhere')]) {
    t.strictSame(await repo.versions(), ['0.1.0', '0.2.0'], `${repo.where}: only well-formed versions`);
    t.equal((await repo.file(tarballName('0.2.0')))?.toString(), 'tgz');
    t.equal(await repo.file(tarballName('0.1.0')), undefined, 'a missing file is undefined');
  }
  await fs.rm(path.join(dir, 'index.json'));
  await t.rejects(openRepository(dir, '/').versions(), /holds no index\.json/);
});

t.test('a package passes only with its checksum and a signature by the release key', async (t) => {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519');
  const other = crypto.generateKeyPairSync('ed25519');
  const data = Buffer.from('package bytes');
  const name = tarballName('1.0.0');
  const sha = sha256Line(data, name);
  t.equal(packageProblem(data, name, sha, sign(data, privateKey), publicKey), undefined);
  t.match(packageProblem(data, name, undefined, sign(data, privateKey), publicKey), /\.sha256 is missing/);
  t.match(packageProblem(data, name, sha, undefined, publicKey), /is not signed/);
  const altered = Buffer.from(data);
  altered[0] ^= 1;
  t.match(packageProblem(altered, name, sha, sign(data, privateKey), publicKey), /does not match its checksum/);
  t.match(packageProblem(data, name, sha, sign(data, other.privateKey), publicKey), /signature does not verify/);
  t.match(packageProblem(data, name, sha, 'not base64 at all!', publicKey), /signature does not verify/);
});

t.test('versions order by their numbers, a pre-release before its release', async (t) => {
  t.strictSame(['0.10.0', '0.2.0', '0.2.0-rc.1', '1.0.0', '0.2.1'].sort(compareVersions), ['0.2.0-rc.1', '0.2.0', '0.2.1', '0.10.0', '1.0.0']);
});
