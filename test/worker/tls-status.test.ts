// What a worker reports to /get/https for each host of its TLS sockets: served, the socket's
// listen error, or a certificate in use that expired since it was loaded.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { tlsKey, tlsStatus } from '../../lib/worker/tls/status.js';
import type { TlsPort } from '../../lib/worker/tls/sni.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-tls-status-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/CN=a.test', '-days', '2',
  '-keyout', path.join(dir, 'a.key'), '-out', path.join(dir, 'a.crt')], { stdio: 'ignore' });
const material = [{ cert: fs.readFileSync(path.join(dir, 'a.crt')), key: fs.readFileSync(path.join(dir, 'a.key')), ca: undefined }];
const host = (name: string) => ({ name, names: [name], listen: { host: '127.0.0.1', port: 8443 }, material, stapleKey: undefined });
const port: TlsPort = { listen: { host: '127.0.0.1', port: 8443 }, options: {}, hosts: [host('a.test'), host('b.test')] };

t.test('hosts of an open TLS socket with valid certificates are served', async (t) => {
  t.strictSame(tlsStatus([port], new Map()), { 'a.test': null, 'b.test': null });
});

t.test('every host of a socket that could not be opened gets its listen error', async (t) => {
  const s = tlsStatus([port], new Map([[tlsKey(port), 'listen EACCES: permission denied 127.0.0.1:8443']]));
  t.equal(s['a.test'], 'TLS port 127.0.0.1:8443 cannot be opened: listen EACCES: permission denied 127.0.0.1:8443');
  t.equal(s['b.test'], s['a.test']);
});

t.test('a certificate in use that expired since it was loaded makes its host not working', async (t) => {
  const s = tlsStatus([port], new Map(), Date.now() + 3 * 86_400_000);
  t.match(s['a.test'], /^certificate CN=a\.test expired on \d{4}-/);
});
