// Black-box: an origin reached over TLS (origin.protocol https). Origin certificates are verified
// (node's CA store plus NODE_EXTRA_CA_CERTS), against the name the origin is asked for: the
// virtual host name for an IP address, the domain for a domain address.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import t from 'tap';
import { request } from 'undici';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-https-origin-'));
function selfSigned(name: string, san: string): { key: Buffer; cert: Buffer; certPath: string } {
  const keyPath = path.join(dir, `${name}.key`);
  const certPath = path.join(dir, `${name}.pem`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${name}`, '-days', '1',
    '-addext', `subjectAltName=${san}`, '-keyout', keyPath, '-out', certPath], { stdio: 'ignore' });
  return { key: fs.readFileSync(keyPath), cert: fs.readFileSync(certPath), certPath };
}
const trusted = selfSigned('secure.com', 'DNS:secure.com,DNS:wrong-name.com,DNS:h2.com');
const untrusted = selfSigned('untrusted.com', 'DNS:untrusted.com');

interface Seen { url: string; servername: string | false | null; host: string | undefined }
async function tlsOrigin(c: { key: Buffer; cert: Buffer }, seen: Seen[]): Promise<https.Server> {
  const s = https.createServer({ key: c.key, cert: c.cert }, (req, res) => {
    seen.push({ url: req.url!, servername: (req.socket as TLSSocket).servername, host: req.headers.host });
    const body = `tls:${req.method} ${req.url}`;
    res.writeHead(200, { 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return s;
}
const seenTrusted: Seen[] = [];
const seenUntrusted: Seen[] = [];
const good = await tlsOrigin(trusted, seenTrusted);
const bad = await tlsOrigin(untrusted, seenUntrusted);
// An origin offering h2 first by ALPN (and HTTP/1.1): origins are spoken to in HTTP/1.1 only.
const seenH2: { version: string; alpn: string | false | null }[] = [];
const h2 = http2.createSecureServer({ key: trusted.key, cert: trusted.cert, allowHTTP1: true }, (req, res) => {
  seenH2.push({ version: req.httpVersion, alpn: (req.socket as TLSSocket).alpnProtocol });
  res.writeHead(200, { 'content-length': '2' });
  res.end('h2');
});
await new Promise<void>((r) => h2.listen(0, '127.0.0.1', () => r()));
const portOf = (s: https.Server | http2.Http2SecureServer): number => (s.address() as AddressInfo).port;

const port = await freePort();
const server = await startServer([
  { name: 'secure.com', listen: `127.0.0.1:${port}`, origin: { protocol: 'https', address: [`127.0.0.1:${portOf(good)}`] } },
  { name: 'untrusted.com', listen: `127.0.0.1:${port}`, origin: { protocol: 'https', address: [`127.0.0.1:${portOf(bad)}`] } },
  { name: 'other-name.com', listen: `127.0.0.1:${port}`, origin: { protocol: 'https', address: [`127.0.0.1:${portOf(good)}`] } },
  { name: 'h2.com', listen: `127.0.0.1:${port}`, origin: { protocol: 'https', address: [`127.0.0.1:${portOf(h2)}`] } },
], { env: { NODE_EXTRA_CA_CERTS: trusted.certPath } });
t.teardown(async () => {
  await server.stop();
  good.closeAllConnections(); bad.closeAllConnections();
  await new Promise((r) => good.close(r));
  await new Promise((r) => bad.close(r));
  await new Promise((r) => h2.close(r));
  fs.rmSync(dir, { recursive: true, force: true });
});

const get = (host: string, p: string) =>
  request(`http://127.0.0.1:${port}${p}`, { headers: { host } }).then(async (r) => ({ status: r.statusCode, body: await r.body.text() }));

t.test('an https origin with a trusted certificate serves, asked by SNI for the virtual host name', async (t) => {
  const r = await get('secure.com', '/s?q=1');
  t.equal(r.status, 200);
  t.equal(r.body, 'tls:GET /s?q=1');
  const seen = seenTrusted.find((s) => s.url === '/s?q=1')!;
  t.equal(seen.servername, 'secure.com');
  t.equal(seen.host, `secure.com:${portOf(good)}`);
});

t.test('an https origin whose certificate is not trusted gets no request: 502', async (t) => {
  const r = await get('untrusted.com', '/u');
  t.equal(r.status, 502);
  t.match(r.body, /502 Bad Gateway/);
  t.equal(seenUntrusted.length, 0);
});

t.test('an https origin whose certificate does not name the host asked for gets no request: 502', async (t) => {
  const r = await get('other-name.com', '/n');
  t.equal(r.status, 502);
  t.notOk(seenTrusted.some((s) => s.url === '/n'));
});

t.test('an https origin offering h2 by ALPN is asked in HTTP/1.1', async (t) => {
  const r = await get('h2.com', '/v');
  t.equal(r.status, 200);
  t.equal(r.body, 'h2');
  t.same(seenH2, [{ version: '1.1', alpn: 'http/1.1' }]);
});
