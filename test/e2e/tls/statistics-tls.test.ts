// Black-box: the statistics of a TLS service port. A TLS connection is one client connection
// (accepted once, whether HTTP/1.1 or HTTP/2 serves it), and its bytes count in the host's SSL
// sizes and HttpsTraffic; plain-text requests do not.
import path from 'node:path';
import t from 'tap';
import { curl, makeCert, tlsNode } from './helpers.js';
import { rawRequest } from '../../helpers/raw-client.js';
import { pollUntil } from '../../helpers/wait.js';

const HOST = 'st.test';

t.test('TLS connections are counted once and their bytes are the SSL sizes of the host', async (t) => {
  const n = await tlsNode(t, [{ name: HOST, https: [{ cert: 'st.crt', key: 'st.key' }] }], (dir) => makeCert(dir, 'st', HOST));
  const ca = path.join(n.dir, 'st.crt');
  const started = await n.server.waitForLog((l) => l.msg === 'started');
  const api = `http://127.0.0.1:${started.api as number}`;
  n.origin.on('/obj', (_q, res) => { res.writeHead(200, { 'cache-control': 'max-age=600', 'content-length': 500 }); res.end('z'.repeat(500)); });

  t.equal((await curl(n.tlsPort, HOST, '/obj', ca, ['--http1.1'])).code, 0, 'HTTP/1.1 over TLS');
  const h2 = await curl(n.tlsPort, HOST, '/obj', ca, ['--http2']);
  t.match(h2.stdout, /^HTTP\/2 200/, 'HTTP/2 over TLS');
  t.equal((await rawRequest(n.plainPort, `GET /obj HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`)).status, 200, 'and one in plain text');

  const sample = (text: string, name: string): number | undefined => {
    const l = text.split('\n').find((x) => x.startsWith(`${name} `));
    return l === undefined ? undefined : Number(l.slice(name.length + 1));
  };
  const metrics = await pollUntil(async () => (await fetch(`${api}/metrics`)).text(),
    (m) => sample(m, 'svc_client_requests_total{vhost="st.test"}') === 3, { timeoutMs: 10_000 });
  t.equal(sample(metrics, 'svc_client_connections_accepted_total'), 3, 'three connections, each counted once');

  const doc = (await (await fetch(`${api}/monitoring/average?min=5`)).json()) as { Host: { VirtualHost: Array<Record<string, any>> } };
  const vh = doc.Host.VirtualHost[0]!;
  const entry = vh.ClientTraffic.Traffic[0];
  const near = (a: number, b: number): boolean => Math.abs(a - b) < 0.005;
  t.ok(entry.SSL.SendSize > 0 && entry.SSL.RecvSize > 0, 'bytes over TLS are counted');
  // Two of the three answers went over TLS: the same object, so the TLS share of the bytes sent
  // is two of three (the plain answer's head has the same fields; HTTP/2 heads are smaller, so
  // compare with bounds).
  const out = entry.HttpResHeaderSize + entry.HttpResBodySize;
  t.ok(entry.SSL.SendSize < out, 'the plain-text answer is not in SendSize');
  t.ok(entry.SSL.SendSize * 300 >= 2 * 500, `both TLS bodies are: ${JSON.stringify(entry.SSL)} ${out}`);
  t.ok(near(vh.ClientTraffic.HttpsTraffic, entry.SSL.SendSize + entry.SSL.RecvSize), 'HttpsTraffic is the TLS bytes both ways');
});
