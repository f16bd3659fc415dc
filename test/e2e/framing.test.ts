// Black-box: message framing the parser lets through and the receive stage must refuse (field
// count, transfer codings, protocol versions, content on GET/HEAD), over raw sockets against the
// real server. Default limits on a.com (16 KiB of fields, 10 s head timeout): 2,000 short fields
// fit in them, which is what made the field-count truncation reachable.
import t from 'tap';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { rawRequest } from '../helpers/raw-client.js';
import { startServer } from '../helpers/server.js';

const origin = await new TestOrigin().start();
const port = await freePort();
const server = await startServer([
  { name: 'a.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
  { name: 'few.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
    functions: { network: { http: { frontEnd: { maxHeaderCount: 10 } } } } },
]);
t.teardown(async () => { await server.stop(); await origin.stop(); });

/** `n` header field lines of 5 bytes each (2,000 of them stay far below the byte limits). */
const fields = (n: number): string => 'x:1\r\n'.repeat(n);

t.test('a POST whose Content-Length comes after field 2000 is refused with 431 and nothing reaches the origin', async (t) => {
  const r = await rawRequest(port, `POST /f6-cl HTTP/1.1\r\nHost: a.com\r\n${fields(2000)}Content-Length: 5\r\n\r\nhello`);
  t.equal(r.status, 431);
  t.ok(r.closed, 'the connection is closed');
  t.equal(origin.count('/f6-cl'), 0, 'the origin never saw the request');
});

t.test('a second Host after field 2000 is refused and nothing reaches the origin', async (t) => {
  const r = await rawRequest(port, `GET /f6-host HTTP/1.1\r\nHost: a.com\r\n${fields(2000)}Host: evil.com\r\n\r\n`);
  t.ok(r.status === 400 || r.status === 431, `refused (${r.status})`);
  t.ok(r.closed, 'the connection is closed');
  t.equal(origin.count('/f6-host'), 0, 'the origin never saw the request');
});

t.test('2,000 header fields are served and 2,001 are refused with 431', async (t) => {
  const ok = await rawRequest(port, `GET /f6-2000 HTTP/1.1\r\nHost: a.com\r\n${fields(1998)}Connection: close\r\n\r\n`);
  t.equal(ok.status, 200, 'Host + 1998 + Connection = 2000 fields');
  const over = await rawRequest(port, `GET /f6-2001 HTTP/1.1\r\nHost: a.com\r\n${fields(1999)}Connection: close\r\n\r\n`);
  t.equal(over.status, 431);
  t.ok(over.closed);
  t.equal(origin.count('/f6-2001'), 0);
});

t.test('a host\'s own maxHeaderCount applies to its requests', async (t) => {
  t.equal((await rawRequest(port, `GET /few HTTP/1.1\r\nHost: few.com\r\n${fields(9)}Connection: close\r\n\r\n`)).status, 431, '11 fields on few.com (limit 10)');
  t.equal((await rawRequest(port, `GET /few HTTP/1.1\r\nHost: few.com\r\n${fields(8)}Connection: close\r\n\r\n`)).status, 200, '10 fields on few.com');
  t.equal((await rawRequest(port, `GET /few HTTP/1.1\r\nHost: a.com\r\n${fields(9)}Connection: close\r\n\r\n`)).status, 200, '11 fields on a.com (global 2000)');
});

t.test('a transfer coding other than chunked is answered 501 and nothing reaches the origin', async (t) => {
  const body = '5\r\nhello\r\n0\r\n\r\n';
  const listed = await rawRequest(port, `POST /te-gzip HTTP/1.1\r\nHost: a.com\r\nTransfer-Encoding: gzip, chunked\r\n\r\n${body}`);
  t.equal(listed.status, 501);
  t.ok(listed.closed, 'the connection is closed');
  const split = await rawRequest(port, `POST /te-split HTTP/1.1\r\nHost: a.com\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n${body}`);
  t.equal(split.status, 501, 'also when the codings come in two field lines');
  t.ok(split.closed);
  t.equal(origin.count('/te-gzip') + origin.count('/te-split'), 0, 'the origin never saw them');
});

t.test('Transfer-Encoding: chunked in any case and spacing is accepted, chunked not last stays 400', async (t) => {
  const r = await rawRequest(port, 'POST /te-ok HTTP/1.1\r\nHost: a.com\r\nTransfer-Encoding:  ChunKed \r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n');
  t.equal(r.status, 200);
  t.equal(origin.seen.find((s) => s.url === '/te-ok')?.body.toString(), 'hello', 'the origin got the decoded body');
  const notLast = await rawRequest(port, 'POST /te-last HTTP/1.1\r\nHost: a.com\r\nTransfer-Encoding: chunked, gzip\r\n\r\n5\r\nhello\r\n0\r\n\r\n');
  t.equal(notLast.status, 400);
  t.ok(notLast.closed);
});

t.test('an HTTP/0.9 request line is answered 400 at once and the connection closed', async (t) => {
  // The head timeout is 10 s: an answer within this wait can only be the immediate refusal.
  const r = await rawRequest(port, 'GET /v09\r\n', { timeoutMs: 5000 });
  t.equal(r.status, 400);
  t.ok(r.closed, 'the connection is closed');
  const withFields = await rawRequest(port, 'GET /v09-fields\r\nHost: a.com\r\n\r\n', { timeoutMs: 5000 });
  t.equal(withFields.status, 400, 'also when fields follow the versionless line');
  t.ok(withFields.closed);
  t.equal(origin.count('/v09') + origin.count('/v09-fields'), 0);
});

t.test('a request line with a major version other than 1 is answered 505', async (t) => {
  const r = await rawRequest(port, 'GET /v2 HTTP/2.0\r\nHost: a.com\r\n\r\n');
  t.equal(r.status, 505);
  t.match(r.text, /^HTTP\/1\.1 505 HTTP Version Not Supported/);
  t.ok(r.closed, 'the connection is closed');
  t.equal(origin.count('/v2'), 0);
  t.equal((await rawRequest(port, 'GET /v10 HTTP/1.0\r\nHost: a.com\r\n\r\n')).status, 200, 'HTTP/1.0 is served');
});

t.test('a GET or a HEAD with content is refused with 400 alike and nothing reaches the origin', async (t) => {
  for (const method of ['GET', 'HEAD']) {
    const cl = await rawRequest(port, `${method} /body-${method} HTTP/1.1\r\nHost: a.com\r\nContent-Length: 5\r\n\r\nhello`);
    t.equal(cl.status, 400, `${method} with Content-Length: 5`);
    t.ok(cl.closed, 'the connection is closed');
    const chunked = await rawRequest(port, `${method} /chunked-${method} HTTP/1.1\r\nHost: a.com\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`);
    t.equal(chunked.status, 400, `${method} with a chunked body`);
    t.ok(chunked.closed);
    t.equal(origin.count(`/body-${method}`) + origin.count(`/chunked-${method}`), 0, `the origin never saw the ${method}s`);
    const empty = await rawRequest(port, `${method} /empty-${method} HTTP/1.1\r\nHost: a.com\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    t.equal(empty.status, 200, `${method} with Content-Length: 0 is served`);
  }
});
