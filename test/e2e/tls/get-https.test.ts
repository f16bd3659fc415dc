// Black-box: `/get/https` tells what the workers serve (a host whose TLS port is taken is not
// working, with the reason, until a reload opens the port; the three results of document 1), and
// `/monitoring/ssl?ciphersuite=` lists the suites a TLS port configured with the expression
// offers on this OpenSSL: every listed suite is negotiated, the spec's default is the mapped set.
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { freePort } from '../../helpers/ports.js';
import { startServer } from '../../helpers/server.js';
import { waitFor } from '../../helpers/wait.js';
import { call, svc } from '../../lifecycle/fixtures/node.js';
import { curl, makeCert, presentedCn, tlsNode } from './helpers.js';

interface HttpsItem { name: string; enable: boolean; error?: string }

t.test('/get/https: a host whose TLS port is taken is not working, with the reason, until a reload opens the port', async (t) => {
  const taken = await freePort();
  const blocker = net.createServer();
  await new Promise<void>((r) => blocker.listen(taken, '127.0.0.1', () => r()));
  const n = await tlsNode(t, [
    { name: 'a.test', https: [{ cert: 'a.crt', key: 'a.key' }] },
    { name: 'b.test', https: [{ cert: 'b.crt', key: 'b.key' }], httpsOptions: { listen: `127.0.0.1:${taken}` } },
  ], (dir) => { makeCert(dir, 'a', 'a.test'); makeCert(dir, 'b', 'b.test'); });

  const r = await call(n.server.apiPort, '/get/https');
  t.equal(r.status, 503, r.text);
  t.match(r.json.reason, /b\.test/);
  const items = r.json.result as HttpsItem[];
  t.match(items.find((i) => i.name === 'a.test'), { enable: true });
  t.notOk('error' in items.find((i) => i.name === 'a.test')!, 'a working host has no error');
  const b = items.find((i) => i.name === 'b.test')!;
  t.equal(b.enable, false);
  t.match(b.error, new RegExp(`TLS port 127\\.0\\.0\\.1:${taken} cannot be opened: .*EADDRINUSE`));
  const plain = await request(`http://127.0.0.1:${n.plainPort}/x`, { headers: { host: 'b.test' } });
  await plain.body.text();
  t.equal(plain.statusCode, 200, 'b.test is still served on its plain port');
  t.equal((await presentedCn(n.tlsPort, ['-servername', 'a.test'])).cn, 'a.test', 'a.test is served over TLS');

  // svc reload applies the file and says which part the runtime could not honour.
  const reload = await svc(['reload', '--setting', n.server.settingPath]);
  t.equal(reload.code, 0, 'the file itself is applied');
  t.match(reload.stderr, new RegExp(`not serving: hosting\\[name=b\\.test\\]\\.https: TLS port 127\\.0\\.0\\.1:${taken} cannot be opened: .*EADDRINUSE`));

  await new Promise<void>((r) => blocker.close(() => r()));
  n.server.signal('SIGHUP');
  const healthy = await waitFor(async () => (await call(n.server.apiPort, '/get/https')).status === 200, { timeoutMs: 30_000 });
  t.ok(healthy, 'after the port is free and a reload, every HTTPS service works');
  const after = await call(n.server.apiPort, '/get/https');
  t.strictSame((after.json.result as HttpsItem[]).map((i) => [i.name, i.enable]), [['a.test', true], ['b.test', true]]);
  t.equal((await presentedCn(taken, ['-servername', 'b.test'])).cn, 'b.test', 'b.test is served over TLS on the port it got');
});

t.test('/get/https answers 404 "no HTTPS service" for a node without certificates', async (t) => {
  const server = await startServer([{ name: 'p.test', listen: `127.0.0.1:${await freePort()}`, origin: { address: ['127.0.0.1:9'] } }]);
  t.teardown(() => server.stop());
  const r = await call(server.apiPort, '/get/https');
  t.equal(r.status, 404);
  t.equal(r.json.reason, 'no HTTPS service');
});

interface Cipher { Name: string; Ver: string }

t.test('/monitoring/ssl lists the suites a TLS port with the same ciphersuite negotiates', async (t) => {
  const expr = 'ECDHE+AESGCM:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256';
  // An RSA and an ECDSA certificate: every ECDHE suite, either authentication, can be served.
  const n = await tlsNode(t, [{ name: 'a.test', https: [{ cert: 'a.crt', key: 'a.key' }, { cert: 'e.crt', key: 'e.key' }], httpsOptions: { ciphersuite: expr } }],
    (dir) => { makeCert(dir, 'a', 'a.test'); makeCert(dir, 'e', 'a.test', { ec: true }); });
  const r = await call(n.server.apiPort, `/monitoring/ssl?ciphersuite=${encodeURIComponent(expr)}`);
  t.equal(r.status, 200, r.text);
  const listed = r.json.result as Cipher[];
  t.strictSame(listed.filter((c) => c.Ver === 'TLSv1.3').map((c) => c.Name).sort(), ['TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256']);
  const v12 = listed.filter((c) => c.Ver === 'TLSv1.2').map((c) => c.Name);
  t.strictSame([...v12].sort(), ['ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384', 'ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES256-GCM-SHA384']);
  for (const name of v12) {
    const s = await presentedCn(n.tlsPort, ['-servername', 'a.test', '-tls1_2', '-cipher', name]);
    t.match(s.out.stdout, new RegExp(`Cipher is ${name}`), `${name} is negotiated`);
  }
  for (const c of listed.filter((x) => x.Ver === 'TLSv1.3')) {
    const s = await presentedCn(n.tlsPort, ['-servername', 'a.test', '-tls1_3', '-ciphersuites', c.Name]);
    t.match(s.out.stdout, new RegExp(`Cipher is ${c.Name}`), `${c.Name} is negotiated`);
  }
  const off = await presentedCn(n.tlsPort, ['-servername', 'a.test', '-tls1_3', '-ciphersuites', 'TLS_AES_128_GCM_SHA256']);
  t.equal(off.cn, undefined, 'a TLS 1.3 suite not listed is not negotiated');
  const ok = await curl(n.tlsPort, 'a.test', '/x', path.join(n.dir, 'a.crt'), ['--http1.1', '--tlsv1.2', '--tls-max', '1.2', '--ciphers', 'ECDHE-RSA-AES128-GCM-SHA256']);
  t.equal(ok.code, 0, ok.stderr);

  const spec = await call(n.server.apiPort, `/monitoring/ssl?ciphersuite=${encodeURIComponent('ALL:!ADH:RC4+RSA:+HIGH:+MEDIUM:+LOW:+SSLv2:+EXP')}`);
  t.equal(spec.status, 200);
  const names = (spec.json.result as Cipher[]).map((c) => c.Name);
  t.ok(names.includes('ECDHE-RSA-AES128-GCM-SHA256'));
  t.notOk(names.some((c) => /RC4|EXP|NULL|DES-CBC3|ADH|MD5/.test(c)), `the spec's default lists the mapped safe set only: ${names.join(' ')}`);
  const one = await call(n.server.apiPort, '/monitoring/ssl?cs=TLS_AES_128_GCM_SHA256');
  t.strictSame((one.json.result as Cipher[]).map((c) => c.Name), ['TLS_AES_128_GCM_SHA256'], 'a TLS 1.3 name alone is that suite alone');
  t.equal((await call(n.server.apiPort, '/monitoring/ssl?cs=NOTACIPHER')).status, 400);
});
