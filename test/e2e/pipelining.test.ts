// Black-box: several requests in one write. Every complete request is answered, in order, before
// whatever ends the connection (a malformed message).
import t from 'tap';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { rawRequest, splitResponses } from '../helpers/raw-client.js';
import { startServer } from '../helpers/server.js';

const origin = await new TestOrigin().start();
const port = await freePort();
const server = await startServer([
  { name: 'a.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
]);
t.teardown(async () => { await server.stop(); await origin.stop(); });

/** Status and body of every answer a connection received, e.g. `200 origin:GET /x`, `400`. */
async function answers(bytes: string): Promise<{ seen: string[]; closed: boolean }> {
  const r = await rawRequest(port, bytes);
  const seen = splitResponses(r.text).map((a) => (a.status < 400 ? `${a.status} ${a.body}` : String(a.status)));
  return { seen, closed: r.closed };
}

t.test('a valid request followed by a malformed one gets its answer, then the 400, in that order', async (t) => {
  // It was a race: run it often enough to see it (bounded).
  const wrong: string[] = [];
  for (let i = 0; i < 50; i++) {
    const r = await answers(`POST /f8-${i} HTTP/1.1\r\nHost: a.com\r\nContent-Length: 5\r\n\r\nhelloGARBAGE\r\n\r\n`);
    const expected = [`200 origin:POST /f8-${i}`, '400'];
    if (JSON.stringify(r.seen) !== JSON.stringify(expected) || !r.closed) wrong.push(`run ${i}: ${JSON.stringify(r.seen)} closed=${r.closed}`);
  }
  t.strictSame(wrong, [], 'every run: the 200 for the POST, then 400, then the connection closed');
  t.equal(origin.seen.filter((s) => s.url.startsWith('/f8-') && s.body.toString() === 'hello').length, 50, 'the origin got each POST with its body');
});

t.test('two pipelined requests before a malformed one are both answered before the 400', async (t) => {
  const r = await answers('GET /p1 HTTP/1.1\r\nHost: a.com\r\n\r\nGET /p2 HTTP/1.1\r\nHost: a.com\r\n\r\nG{T / HTTP/1.1\r\n\r\n');
  t.strictSame(r.seen, ['200 origin:GET /p1', '200 origin:GET /p2', '400']);
  t.ok(r.closed);
});

t.test('a request whose body turns out malformed gets the 400 after the answers before it', async (t) => {
  const r = await answers('GET /b1 HTTP/1.1\r\nHost: a.com\r\n\r\n' +
    'POST /b2 HTTP/1.1\r\nHost: a.com\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nZZ\r\n');
  t.strictSame(r.seen, ['200 origin:GET /b1', '400']);
  t.ok(r.closed);
  t.equal(origin.count('/b2'), 0, 'the broken request never completed at the origin');
});
