// Black-box: hosts with https[] are served over TLS on their https listen; the certificate is
// chosen by SNI from the hosts' names and aliases, the default host's answers a client without
// SNI or with an unknown name, and the TLS version switches decide what a client can negotiate.
import path from 'node:path';
import t from 'tap';
import { curl, makeCert, presentedCn, tlsNode } from './helpers.js';

const hosts = [
  { name: 'a.test', https: [{ cert: 'a.crt', key: 'a.key' }] },
  { name: 'b.test', aliases: ['*.b.test'], https: [{ cert: 'b.crt', key: 'b.key' }] },
];
const prepare = (dir: string): void => {
  makeCert(dir, 'a', 'a.test');
  makeCert(dir, 'b', 'b.test', { sans: ['*.b.test'], ec: true });
};

t.test('two hosts on one TLS port', async (t) => {
  const n = await tlsNode(t, hosts, prepare, { meta: { defaultHosting: 'b.test' } });

  t.test('each host name gets its own certificate (SNI), aliases and wildcards too', async (t) => {
    t.equal((await presentedCn(n.tlsPort, ['-servername', 'a.test'])).cn, 'a.test');
    t.equal((await presentedCn(n.tlsPort, ['-servername', 'b.test'])).cn, 'b.test');
    t.equal((await presentedCn(n.tlsPort, ['-servername', 'x.b.test'])).cn, 'b.test', 'a wildcard alias');
  });

  t.test('a client without SNI or with an unknown name gets the default host\'s certificate', async (t) => {
    t.equal((await presentedCn(n.tlsPort, ['-noservername'])).cn, 'b.test');
    t.equal((await presentedCn(n.tlsPort, ['-servername', 'unknown.test'])).cn, 'b.test');
  });

  t.test('a request over TLS is served through the pipeline, with the host\'s cache', async (t) => {
    n.origin.on('/hello.txt', (req, res) => {
      const body = `origin:${req.method} ${req.url}`;
      res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'max-age=60', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    // HTTP/1.1 over TLS here (curl would take h2, which h2.test.ts covers).
    const first = await curl(n.tlsPort, 'a.test', '/hello.txt', path.join(n.dir, 'a.crt'), ['--http1.1']);
    t.equal(first.code, 0, first.stderr);
    t.match(first.stdout, /^HTTP\/1\.1 200/);
    t.match(first.stdout, /origin:GET \/hello\.txt$/);
    const second = await curl(n.tlsPort, 'a.test', '/hello.txt', path.join(n.dir, 'a.crt'), ['--http1.1']);
    t.match(second.stdout, /origin:GET \/hello\.txt$/);
    t.equal(n.origin.count('/hello.txt'), 1, 'the second request is a cache hit');
    const wild = await curl(n.tlsPort, 'x.b.test', '/w', path.join(n.dir, 'b.crt'), ['--http1.1']);
    t.equal(wild.code, 0, wild.stderr);
    t.match(wild.stdout, /^HTTP\/1\.1 200/);
  });

  t.test('TLS 1.3 and 1.2 are negotiated; TLS 1.1 and 1.0 are refused by default', async (t) => {
    t.equal((await presentedCn(n.tlsPort, ['-servername', 'a.test', '-tls1_3'])).cn, 'a.test');
    t.equal((await presentedCn(n.tlsPort, ['-servername', 'a.test', '-tls1_2'])).cn, 'a.test');
    t.equal((await presentedCn(n.tlsPort, ['-servername', 'a.test', '-tls1_1', '-cipher', 'DEFAULT@SECLEVEL=0'])).cn, undefined);
    t.equal((await presentedCn(n.tlsPort, ['-servername', 'a.test', '-tls1', '-cipher', 'DEFAULT@SECLEVEL=0'])).cn, undefined);
  });

  t.test('the plain port stays plain HTTP', async (t) => {
    const r = await fetch(`http://127.0.0.1:${n.plainPort}/plain`, { headers: { host: 'a.test' } });
    t.equal(r.status, 200);
  });
});

t.test('enableTls11 lets a TLS 1.1 client in; enableTls13 false keeps a TLS 1.3 client out', async (t) => {
  const opts = { enableTls11: true, enableTls13: false };
  const n = await tlsNode(t, hosts.map((h) => ({ ...h, httpsOptions: opts })), prepare);
  t.equal((await presentedCn(n.tlsPort, ['-servername', 'a.test', '-tls1_1', '-cipher', 'DEFAULT@SECLEVEL=0'])).cn, 'a.test');
  t.equal((await presentedCn(n.tlsPort, ['-servername', 'a.test', '-tls1_3'])).cn, undefined);
});

t.test('ciphersuite restricts the suites a client can get', async (t) => {
  const opts = { enableTls13: false, ciphersuite: 'ECDHE-RSA-AES128-GCM-SHA256' };
  const n = await tlsNode(t, [{ ...hosts[0]!, httpsOptions: opts }], prepare);
  const ok = await presentedCn(n.tlsPort, ['-servername', 'a.test', '-tls1_2']);
  t.match(ok.out.stdout, /Cipher is ECDHE-RSA-AES128-GCM-SHA256/);
  const other = await presentedCn(n.tlsPort, ['-servername', 'a.test', '-tls1_2', '-cipher', 'ECDHE-RSA-AES256-GCM-SHA384']);
  t.equal(other.cn, undefined, 'a client offering only another suite is refused');
});
