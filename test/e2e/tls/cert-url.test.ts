// Black-box: `cert` and `key` given as URLs (served by a loopback HTTP server) are fetched when
// the setting is loaded and served; a source that answers 404 or never answers refuses the
// deploy at its JSON path; the fetched copies go into the setting history, so a restore works
// with the PEM server gone and the copies deleted.
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { baseSetting } from '../../helpers/server.js';
import { call } from '../../lifecycle/fixtures/node.js';
import { makeCert, run, tlsNode, type TlsNode } from './helpers.js';

const HOST = 'a.test';

async function servedFingerprint(port: number): Promise<string | undefined> {
  const s = await run('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', HOST]);
  const x = await run('openssl', ['x509', '-noout', '-fingerprint', '-sha256'], s.stdout);
  return x.code === 0 ? x.stdout.trim().split('=')[1] : undefined;
}

t.test('certificates given as URLs are fetched at load, refused with their JSON path when they cannot be, and restored from the history without the network', async (t) => {
  const pems = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-pems-'));
  t.teardown(() => fs.rmSync(pems, { recursive: true, force: true }));
  makeCert(pems, 'a', HOST);
  makeCert(pems, 'b', HOST, { ec: true });
  const fp = (name: string): string => new X509Certificate(fs.readFileSync(path.join(pems, `${name}.crt`))).fingerprint256;
  // /hang/... accepts the request and never answers.
  const pemServer = http.createServer((req, res) => {
    if (req.url!.startsWith('/hang/')) return;
    const file = path.join(pems, path.basename(req.url!));
    if (!fs.existsSync(file)) { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'content-type': 'application/x-pem-file' }).end(fs.readFileSync(file));
  });
  await new Promise<void>((r) => pemServer.listen(0, '127.0.0.1', () => r()));
  const base = `http://127.0.0.1:${(pemServer.address() as AddressInfo).port}`;
  let pemServerUp = true;
  t.teardown(() => { if (pemServerUp) { pemServer.closeAllConnections(); pemServer.close(); } });

  const https = (cert: string, key: string) => [{ cert: `${base}/${cert}`, key: `${base}/${key}` }];
  const n: TlsNode = await tlsNode(t, [{ name: HOST, https: https('a.crt', 'a.key') }], () => undefined);
  t.equal(await servedFingerprint(n.tlsPort), fp('a'), 'the certificate fetched at start is served');

  const deploy = async (cert: string, key: string) => {
    const hosting = [{ name: HOST, listen: `127.0.0.1:${n.plainPort}`, origin: { address: [`127.0.0.1:${n.origin.port}`] },
      https: https(cert, key), httpsOptions: { listen: `127.0.0.1:${n.tlsPort}` } }];
    fs.writeFileSync(n.server.settingPath, JSON.stringify(baseSetting(hosting, n.server.basePort, {}, n.server.apiPort)));
    return call(n.server.apiPort, '/setting/deploy/local');
  };

  const missing = await deploy('missing.crt', 'a.key');
  t.equal(missing.json.status, 'Fail', missing.text);
  t.match(missing.json.reason, new RegExp(`hosting\\[0\\]\\.https\\[0\\]\\.cert: ${base}/missing\\.crt answered 404`));
  const hung = await deploy('hang/a.crt', 'a.key');
  t.equal(hung.json.status, 'Fail', hung.text);
  t.match(hung.json.reason, /hosting\[0\]\.https\[0\]\.cert: .*hang\/a\.crt no answer within 10 s/);
  t.equal(await servedFingerprint(n.tlsPort), fp('a'), 'a refused deploy changed nothing');

  const ok = await deploy('b.crt', 'b.key');
  t.equal(ok.json.status, 'OK', ok.text);
  t.equal(await servedFingerprint(n.tlsPort), fp('b'), 'the deployed URLs are fetched and served');

  // The network source is gone, and so are the copies on disk: only the history has them.
  pemServer.closeAllConnections();
  await new Promise<void>((r) => pemServer.close(() => r()));
  pemServerUp = false;
  fs.rmSync(path.join(n.dir, 'fetched-certs'), { recursive: true, force: true });
  const history = (await call(n.server.apiPort, '/setting/history')).json.history as Array<{ hash: string }>;
  const restored = await call(n.server.apiPort, `/setting/restore/${history[0]!.hash}`);
  t.match(restored.json, { status: 'OK', result: 0 }, restored.text);
  t.equal(await servedFingerprint(n.tlsPort), fp('a'), 'the restored setting serves its certificate from the package');
  t.ok(fs.existsSync(path.join(n.dir, 'fetched-certs')), 'the copies are back under the home');
});
