import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import t from 'tap';
import { ManagementApi } from '../../lib/manager/index.js';
import { freePort } from '../helpers/ports.js';
import { call, fakeRt, makeSetting, startApi, VERSION } from './fixtures/helpers.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-mgmt-tls-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
execFileSync('openssl', [
  'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-days', '1',
  '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
  '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
], { stdio: 'ignore' });
const ca = fs.readFileSync(path.join(dir, 'cert.pem'));

/** A setting with the TLS port on `tlsPort`; cert and key relative to env.home. */
function tlsSetting(tlsPort: number, options: Record<string, unknown> = {}, allowList: Array<{ addr: string; role?: string }> = [{ addr: '127.0.0.1' }]) {
  return makeSetting(
    { allowList, https: { cert: 'cert.pem', key: 'key.pem', options: { listen: `127.0.0.1:${tlsPort}`, ...options } } },
    { home: dir },
  );
}

/** Negotiated TLS version and cipher of one handshake. */
function handshake(port: number, o: tls.ConnectionOptions): Promise<{ version: string | null; cipher: string }> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, ca, servername: 'localhost', ...o }, () => {
      const r = { version: s.getProtocol(), cipher: s.getCipher().name };
      s.end();
      resolve(r);
    });
    s.on('error', reject);
  });
}

t.test('the TLS port answers the same API over https, beside the plain port', async (t) => {
  const tlsPort = await freePort();
  const { api, port } = await startApi(tlsSetting(tlsPort));
  t.teardown(() => api.close());
  t.equal(api.httpsPort, tlsPort);
  const r = await call(tlsPort, '/monitoring/vhostslist', { tls: { ca } });
  t.equal(r.status, 200);
  t.strictSame(r.json, { version: VERSION, method: 'vhostslist', status: 'OK', result: ['a.example.com', 'b.example.com'], reason: null });
  t.equal((await call(port, '/monitoring/vhostslist')).status, 200, 'the plain port still serves');
});

t.test('access control applies on the TLS port as on the plain one', async (t) => {
  const tlsPort = await freePort();
  const { api } = await startApi(tlsSetting(tlsPort, {}, [{ addr: '127.0.0.1', role: 'user' }]));
  t.teardown(() => api.close());
  t.equal((await call(tlsPort, '/command/resetorigin', { tls: { ca } })).status, 401);
  const stranger = await call(tlsPort, '/monitoring/vhostslist', { tls: { ca }, from: '127.0.0.9' });
  t.equal(stranger.status, 401);
  t.equal(stranger.json.reason, 'Unauthorized');
});

t.test('enableHttp false leaves the plain port alone and keeps the TLS port', async (t) => {
  const tlsPort = await freePort();
  // The plain port is held here first: an API that tried to listen on it would fail to start.
  const holder = net.createServer((c) => c.destroy());
  await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => holder.close());
  const setting = tlsSetting(tlsPort, { enableHttp: false });
  setting.env.management.api.port = (holder.address() as net.AddressInfo).port;
  const api = new ManagementApi({ getSetting: () => setting, version: VERSION, rt: fakeRt(), host: '127.0.0.1' });
  await api.start();
  t.teardown(() => api.close());
  t.equal(api.httpPort, undefined);
  t.equal((await call(tlsPort, '/monitoring/vhostslist', { tls: { ca } })).status, 200);
});

t.test('with enableHttp false the TLS port may take the management port itself', async (t) => {
  const port = await freePort();
  const setting = tlsSetting(port, { enableHttp: false });
  setting.env.management.api.port = port;
  const api = new ManagementApi({ getSetting: () => setting, version: VERSION, rt: fakeRt() });
  await api.start();
  t.teardown(() => api.close());
  t.equal((await call(port, '/monitoring/vhostslist', { tls: { ca } })).status, 200);
});

t.test('start() refuses a TLS listen port equal to the plain port while enableHttp is true', async (t) => {
  const port = await freePort();
  const setting = tlsSetting(port + 1);
  setting.env.management.api.port = port;
  // The loader refuses this too; start() must not rely on it.
  setting.env.management.api.https!.options.listen = `127.0.0.1:${port}`;
  const api = new ManagementApi({ getSetting: () => setting, version: VERSION, rt: fakeRt() });
  await t.rejects(api.start(), {
    message: `env.management.api.https.options.listen port ${port} is env.management.api.port; set enableHttp to false or use another port`,
  });
  await t.rejects(call(port, '/monitoring/vhostslist'), { code: 'ECONNREFUSED' }, 'nothing listens');
});

t.test('start() names the certificate file it cannot read, and leaves nothing listening', async (t) => {
  const tlsPort = await freePort();
  const setting = tlsSetting(tlsPort);
  setting.env.management.api.https!.cert = 'missing.pem';
  const api = new ManagementApi({ getSetting: () => setting, version: VERSION, rt: fakeRt() });
  await t.rejects(api.start(), new RegExp(`management TLS: cannot read cert file ${dir}/missing.pem`));
  t.equal(api.httpPort, undefined);
  t.equal(api.httpsPort, undefined);
});

t.test('start() refuses a ciphersuite OpenSSL cannot use', async (t) => {
  const setting = tlsSetting(await freePort(), { ciphersuite: 'NOTACIPHER' });
  const api = new ManagementApi({ getSetting: () => setting, version: VERSION, rt: fakeRt() });
  await t.rejects(api.start(), /management TLS: bad certificate, key or options \(ciphersuite "NOTACIPHER"\)/);
});

t.test('minVersion and maxVersion bound the protocol the TLS port speaks', async (t) => {
  const p13 = await freePort();
  const only13 = await startApi(tlsSetting(p13, { minVersion: 'TLSv1.3' }));
  t.teardown(() => only13.api.close());
  t.equal((await handshake(p13, {})).version, 'TLSv1.3');
  await t.rejects(handshake(p13, { maxVersion: 'TLSv1.2' }), 'a TLS 1.2 client is refused');

  const p12 = await freePort();
  const only12 = await startApi(tlsSetting(p12, { maxVersion: 'TLSv1.2' }));
  t.teardown(() => only12.api.close());
  t.equal((await handshake(p12, {})).version, 'TLSv1.2');
});

t.test('forwardSecrecy enforces the server order and prefers forward-secret suites; false follows the client', async (t) => {
  // The client lists a static-RSA suite first.
  const client = { maxVersion: 'TLSv1.2' as const, ciphers: 'AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256' };
  const pFs = await freePort();
  const fsOn = await startApi(tlsSetting(pFs));
  t.teardown(() => fsOn.api.close());
  t.equal((await handshake(pFs, client)).cipher, 'ECDHE-RSA-AES128-GCM-SHA256');

  const pNo = await freePort();
  const fsOff = await startApi(tlsSetting(pNo, { forwardSecrecy: false }));
  t.teardown(() => fsOff.api.close());
  t.equal((await handshake(pNo, client)).cipher, 'AES128-GCM-SHA256');
});

t.test('ciphersuite limits the TLS 1.2 suites offered', async (t) => {
  const p = await freePort();
  const { api } = await startApi(tlsSetting(p, { ciphersuite: 'ECDHE-RSA-AES256-GCM-SHA384' }));
  t.teardown(() => api.close());
  t.equal((await handshake(p, { maxVersion: 'TLSv1.2' })).cipher, 'ECDHE-RSA-AES256-GCM-SHA384');
  await t.rejects(handshake(p, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-GCM-SHA256' }));
});
