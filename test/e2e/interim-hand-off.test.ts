// Black-box: under hash balance a miss handed to its owner worker still brings the origin's 103
// to the client before the final answer (owner -> sibling connection -> client's worker -> client).
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const HOST = 'hints-hash.test';
const recordDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-interim-records-'));
const held = new Map<string, () => void>();
const origin = await new TestOrigin().otherwise((q, res) => {
  res.writeEarlyHints({ link: '</a.css>; rel=preload; as=style' });
  held.set(q.url, () => {
    res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'max-age=600', 'content-length': 5 });
    res.end('final');
  });
}).start();
const port = await freePort();
const server = await startServer([{ name: HOST, listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }],
  { workers: 2, balance: 'hash', env: { SVC_TEST_RECORD_DIR: recordDir } });
t.teardown(async () => { await server.stop(); await origin.stop(); fs.rmSync(recordDir, { recursive: true, force: true }); });

interface Rec { urlReceived: string; handedTo: number }
function records(): Rec[] {
  const out: Rec[] = [];
  for (const f of fs.readdirSync(recordDir)) {
    for (const line of fs.readFileSync(path.join(recordDir, f), 'utf8').split('\n')) if (line !== '') out.push(JSON.parse(line) as Rec);
  }
  return out;
}

/** One GET on its own connection: the 103 must be there while the origin still holds the answer. */
async function hintedGet(url: string): Promise<string> {
  const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET ${url} HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`));
  let text = '';
  socket.on('data', (c: Buffer) => { text += c.toString('latin1'); });
  const closed = new Promise<void>((r) => { socket.on('close', () => r()); socket.on('error', () => r()); });
  try {
    await until(() => text.includes('\r\n\r\n') && held.has(url), `the 103 of ${url}`, 12_000);
    const early = text;
    held.get(url)!();
    await closed;
    return `${early.slice(0, 30)}|${text}`;
  } finally {
    socket.destroy();
  }
}

t.test('clients on either worker get the 103 before the final answer, handed-off misses included', async (t) => {
  const urls: string[] = [];
  for (let i = 0; i < 24 && !records().some((r) => urls.includes(r.urlReceived) && r.handedTo >= 0); i++) {
    const url = `/hint/${i}`;
    urls.push(url);
    const seen = await hintedGet(url);
    t.match(seen, /^HTTP\/1\.1 103 Early Hints\r\n/, `${url}: the 103 came first`);
    t.match(seen, /\|HTTP\/1\.1 103 [\s\S]*link: <\/a\.css>; rel=preload; as=style\r\n[\s\S]*HTTP\/1\.1 200 [\s\S]*final$/i, `${url}: then the answer`);
    await until(() => records().some((r) => r.urlReceived === url && r.handedTo !== undefined), `the record of ${url}`);
  }
  t.ok(records().some((r) => urls.includes(r.urlReceived) && r.handedTo >= 0), 'at least one of them was handed to its owner worker');
});
