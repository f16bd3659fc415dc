// Black-box: TLS in the logs and the statistics. The svc access form's `sc-resinfo` carries the
// TLS version, `%H` is `https` for HTTP/1.1 over TLS and `http2` for HTTP/2 (`%u` is https:// for
// both); /metrics counts the transactions over TLS and their bytes, and the statistics document
// fills ClientTraffic's HttpsTraffic and SSL members.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { pollUntil, until } from '../../helpers/wait.js';
import { curl, makeCert, tlsNode } from './helpers.js';

const HOST = 'a.test';
const log = (form: string, format?: string) => ({ operations: { log: { access: { loopback: true, form, ...(format === undefined ? {} : { format }) } } } });

function metric(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

t.test('TLS transactions are logged with their TLS version and protocol, and counted apart', async (t) => {
  const n = await tlsNode(t, [
    { name: HOST, https: [{ cert: 'a.crt', key: 'a.key' }], functions: log('svc') },
    { name: 'c.test', https: [{ cert: 'a.crt', key: 'a.key' }], functions: log('custom', '%H %m %U %u') },
  ], (dir) => makeCert(dir, 'a', HOST, { sans: ['c.test'] }), { functions: { operations: { log: { meta: { dir: 'logs' } } } } });
  const ca = path.join(n.dir, 'a.crt');
  const linesOf = (h: string): string[] => {
    const f = path.join(n.dir, 'logs', h, 'access.log');
    return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter((l) => l !== '' && !l.startsWith('#')) : [];
  };

  const r12 = await curl(n.tlsPort, HOST, '/one', ca, ['--http1.1', '--tlsv1.2', '--tls-max', '1.2']);
  t.equal(r12.code, 0, r12.stderr);
  const r13 = await curl(n.tlsPort, HOST, '/two', ca, ['--http2', '--tlsv1.3']);
  t.match(r13.stdout, /^HTTP\/2 200/);
  const plain = await request(`http://127.0.0.1:${n.plainPort}/three`, { headers: { host: HOST } });
  await plain.body.text();
  await until(() => linesOf(HOST).length >= 3, 'three access lines');
  const resinfo = (urlPath: string): string | undefined => {
    const fields = linesOf(HOST).find((l) => l.includes(` ${urlPath} `))?.split(' ');
    // sc-resinfo is the 15th field of the svc form.
    return fields?.[14];
  };
  t.equal(resinfo('/one'), 'TLS1.2', 'HTTP/1.1 over TLS 1.2');
  t.equal(resinfo('/two'), 'TLS1.3', 'HTTP/2 over TLS 1.3');
  t.equal(resinfo('/three'), '-', 'plain HTTP has no TLS version');

  await curl(n.tlsPort, 'c.test', '/h1', ca, ['--http1.1']);
  await curl(n.tlsPort, 'c.test', '/h2', ca, ['--http2']);
  await request(`http://127.0.0.1:${n.plainPort}/plain`, { headers: { host: 'c.test' } }).then((r) => r.body.text());
  await until(() => linesOf('c.test').length >= 3, 'three custom lines');
  const tls = `c.test:${n.tlsPort}`;
  t.strictSame(linesOf('c.test').sort(), ['http GET /plain http://c.test/plain', `http2 GET /h2 https://${tls}/h2`, `https GET /h1 https://${tls}/h1`],
    '%H and the scheme of %u of each protocol');

  const api = `http://127.0.0.1:${n.server.apiPort}`;
  const metrics = await pollUntil(async () => (await (await fetch(`${api}/metrics`)).text()),
    (m) => metric(m, 'svc_client_requests_total', `vhost="${HOST}"`) === 3 && metric(m, 'svc_client_requests_total', 'vhost="c.test"') === 3);
  t.equal(metric(metrics, 'svc_client_tls_requests_total', `vhost="${HOST}"`), 2, 'two of the three requests came over TLS');
  t.equal(metric(metrics, 'svc_client_tls_requests_total', 'vhost="c.test"'), 2);
  const sent = metric(metrics, 'svc_client_tls_sent_bytes_total', `vhost="${HOST}"`) ?? 0;
  const all = metric(metrics, 'svc_client_sent_bytes_total', `vhost="${HOST}"`) ?? 0;
  t.ok(sent > 0 && sent < all, `bytes sent over TLS (${sent}) are part of all bytes sent (${all})`);
  t.ok((metric(metrics, 'svc_client_tls_received_bytes_total', `vhost="${HOST}"`) ?? 0) > 0, 'bytes received over TLS');

  const avg = JSON.parse(await (await fetch(`${api}/monitoring/average?min=5`)).text()) as { Host: { VirtualHost: Array<Record<string, any>> } };
  const vh = avg.Host.VirtualHost.find((h) => h.Name === HOST)!;
  t.ok(vh.ClientTraffic.Traffic[0].SSL.SendSize > 0, 'ClientTraffic SSL SendSize');
  t.ok(vh.ClientTraffic.Traffic[0].SSL.RecvSize > 0, 'ClientTraffic SSL RecvSize');
});
