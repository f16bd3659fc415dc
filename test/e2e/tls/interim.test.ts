// Black-box: the origin's 103 Early Hints reaches an HTTP/2 client on a TLS service port (nghttp,
// ALPN h2) as its own HEADERS frame, before the final answer and with the Link field unchanged.
import { spawn } from 'node:child_process';
import t from 'tap';
import { makeCert, tlsNode } from './helpers.js';
import { until } from '../../helpers/wait.js';

const HOST = 'early.test';
const LINK = '</hero.jpg>; rel=preload; as=image';
const n = await tlsNode(t, [{ name: HOST, https: [{ cert: 'early.crt', key: 'early.key' }] }], (dir) => makeCert(dir, 'early', HOST));
let release: (() => void) | undefined;
n.origin.on('/early', (_q, res) => {
  res.writeEarlyHints({ link: LINK });
  release = () => {
    res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'max-age=600', 'content-length': 5 });
    res.end('final');
  };
});

t.test('nghttp over TLS (h2) sees the 103 with its Link field while the origin still holds the answer', async (t) => {
  const child = spawn('nghttp', ['-nv', '--timeout=10', `https://127.0.0.1:${n.tlsPort}/early`, '-H', `:authority: ${HOST}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
  const exited = new Promise<number>((r) => child.on('close', (code) => r(code ?? -1)));
  const timer = setTimeout(() => child.kill(), 15_000);
  try {
    await until(() => /:status: 103/.test(out) && release !== undefined, 'the 103 HEADERS frame', 12_000);
    t.match(out, /h2 protocol|negotiated protocol: h2/i);
    t.notMatch(out, /:status: 200/, 'no final answer yet');
    t.ok(out.includes(`link: ${LINK}`), 'Link as the origin wrote it');
    release!();
    t.equal(await exited, 0);
    t.ok(out.indexOf(':status: 103') < out.indexOf(':status: 200'), 'then the final answer');
  } finally {
    clearTimeout(timer);
    child.kill();
  }
});
