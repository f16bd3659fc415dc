// Black-box: raw bytes over a socket for every kind of malformed or hostile request.
import t from 'tap';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { rawRequest } from '../helpers/raw-client.js';
import { startServer } from '../helpers/server.js';

const origin = await new TestOrigin().start();
const port = await freePort();
const server = await startServer([
  { name: 'a.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
  { name: 'small.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
    functions: { network: { http: { frontEnd: { maxUrlLength: 300, maxHeaderSize: 2000 } } } } },
  { name: 'roomy.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
    functions: { network: { http: { frontEnd: { maxHeaderSize: 10500 } } } } },
], { extra: { functions: { network: { http: { frontEnd: { maxUrlLength: 2048, maxHeaderSize: 8192, keepAliveTimeout: 1, headersTimeout: 1, requestTimeout: 3 } } } } } });
t.teardown(async () => { await server.stop(); await origin.stop(); });

t.test('a malformed request line is answered 400 and the connection closed', async (t) => {
  const r = await rawRequest(port, 'GET /x HTP/1.1\r\nHost: a.com\r\n\r\n');
  t.equal(r.status, 400);
  t.ok(r.closed);
});

t.test('a request line with more than one space between its parts is answered 400 and nothing reaches the origin', async (t) => {
  for (const line of ['GET  /sp1 HTTP/1.1', 'GET /sp2  HTTP/1.1', 'GET   /sp3   HTTP/1.1']) {
    const r = await rawRequest(port, `${line}\r\nHost: a.com\r\n\r\n`);
    t.equal(r.status, 400, JSON.stringify(line));
    t.ok(r.closed, 'the connection is closed');
  }
  t.equal(origin.count('/sp1') + origin.count('/sp2') + origin.count('/sp3'), 0, 'the origin never saw them');
  const ok = await rawRequest(port, 'GET /sp-ok HTTP/1.1\r\nHost: a.com\r\nX-Spaced: a  b\r\nConnection: close\r\n\r\n');
  t.equal(ok.status, 200, 'spaces inside a field value are not the request line\'s');
});

t.test('an absolute-form target with userinfo is answered 400 and nothing reaches the origin', async (t) => {
  for (const target of ['http://user@a.com/ui1', 'http://user:pw@a.com/ui2', 'http://@a.com/ui3']) {
    const r = await rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: a.com\r\n\r\n`);
    t.equal(r.status, 400, target);
    t.ok(r.closed, 'the connection is closed');
  }
  t.equal(origin.count('/ui1') + origin.count('/ui2') + origin.count('/ui3'), 0, 'the origin never saw them');
  const ok = await rawRequest(port, 'GET http://a.com/ui-ok HTTP/1.1\r\nHost: a.com\r\nConnection: close\r\n\r\n');
  t.equal(ok.status, 200, 'absolute-form without userinfo is served');
});

t.test('a malformed header line is answered 400', async (t) => {
  t.equal((await rawRequest(port, 'GET /x HTTP/1.1\r\nHo st: a\r\n\r\n')).status, 400);
  t.equal((await rawRequest(port, 'GET /x HTTP/1.1\r\nHost: a.com\r\nNoColon\r\n\r\n')).status, 400);
});

t.test('Content-Length together with Transfer-Encoding is refused with 400 and the connection closed', async (t) => {
  const before = origin.seen.length;
  const r = await rawRequest(port, 'POST /smuggle HTTP/1.1\r\nHost: a.com\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a.com\r\n\r\n');
  t.equal(r.status, 400);
  t.ok(r.closed);
  t.equal(origin.seen.length, before, 'nothing reached the origin');
  t.notMatch(r.text, /origin:/);
});

t.test('conflicting Content-Length values are refused with 400 and the connection closed', async (t) => {
  const r = await rawRequest(port, 'POST /x HTTP/1.1\r\nHost: a.com\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd');
  t.equal(r.status, 400);
  t.ok(r.closed);
});

t.test('oversized header fields are answered 431', async (t) => {
  const r = await rawRequest(port, `GET /x HTTP/1.1\r\nHost: a.com\r\nX-Big: ${'a'.repeat(9000)}\r\n\r\n`);
  t.equal(r.status, 431);
  const huge = await rawRequest(port, `GET /x HTTP/1.1\r\nHost: a.com\r\nX-Big: ${'a'.repeat(64000)}\r\n\r\n`);
  t.equal(huge.status, 431, 'beyond the parser limit too');
});

t.test('an oversized URL is answered 414', async (t) => {
  const r = await rawRequest(port, `GET /${'u'.repeat(3000)} HTTP/1.1\r\nHost: a.com\r\n\r\n`);
  t.equal(r.status, 414);
});

t.test('a URL longer than the parser limit itself is answered 414, not 431', async (t) => {
  // Beyond maxHeaderSize + maxUrlLength + 1 KiB: the parser refuses it before the handler runs.
  const r = await rawRequest(port, `GET /${'u'.repeat(40000)} HTTP/1.1\r\nHost: a.com\r\n\r\n`);
  t.equal(r.status, 414);
  t.ok(r.closed);
});

t.test('a host\'s own maxUrlLength and maxHeaderSize apply to its requests', async (t) => {
  const url = `/${'p'.repeat(400)}`;
  t.equal((await rawRequest(port, `GET ${url} HTTP/1.1\r\nHost: small.com\r\nConnection: close\r\n\r\n`)).status, 414, 'small.com allows 300');
  t.equal((await rawRequest(port, `GET ${url} HTTP/1.1\r\nHost: a.com\r\nConnection: close\r\n\r\n`)).status, 200, 'a.com has the global 2048');
  const field = `X-Mid: ${'m'.repeat(3000)}\r\n`;
  t.equal((await rawRequest(port, `GET /h HTTP/1.1\r\nHost: small.com\r\n${field}Connection: close\r\n\r\n`)).status, 431, 'small.com allows 2000 bytes of fields');
  t.equal((await rawRequest(port, `GET /h HTTP/1.1\r\nHost: a.com\r\n${field}Connection: close\r\n\r\n`)).status, 200);
  const big = `X-Big: ${'b'.repeat(9500)}\r\n`;
  t.equal((await rawRequest(port, `GET /h HTTP/1.1\r\nHost: a.com\r\n${big}Connection: close\r\n\r\n`)).status, 431, 'beyond the global 8192');
  t.equal((await rawRequest(port, `GET /h HTTP/1.1\r\nHost: roomy.com\r\n${big}Connection: close\r\n\r\n`)).status, 200, 'roomy.com raises its own limit (within the parser ceiling)');
});

t.test('a repeated Host header is answered 400 and the connection closed', async (t) => {
  const before = origin.seen.length;
  const r = await rawRequest(port, 'GET /two-hosts HTTP/1.1\r\nHost: a.com\r\nHost: evil.com\r\n\r\n');
  t.equal(r.status, 400);
  t.ok(r.closed);
  const same = await rawRequest(port, 'GET /two-hosts HTTP/1.1\r\nHost: a.com\r\nhost: a.com\r\n\r\n');
  t.equal(same.status, 400, 'even when both name the same host');
  t.equal(origin.seen.length, before, 'nothing reached the origin');
});

t.test('a Host value that is not a valid authority is answered 400', async (t) => {
  for (const bad of ['a.com/x', 'a com', 'user@a.com', 'a.com:80x', '[::1', 'a.com:80:90']) {
    const r = await rawRequest(port, `GET /bad-host HTTP/1.1\r\nHost: ${bad}\r\n\r\n`);
    t.equal(r.status, 400, `Host: ${bad}`);
    t.ok(r.closed);
  }
  const ok = await rawRequest(port, `GET /good-host HTTP/1.1\r\nHost: a.com:${port}\r\nConnection: close\r\n\r\n`);
  t.equal(ok.status, 200, 'name and port are fine');
});

t.test('an unknown method token is answered 501, a malformed one 400', async (t) => {
  t.equal((await rawRequest(port, 'BREW /pot HTTP/1.1\r\nHost: a.com\r\n\r\n')).status, 501);
  t.equal((await rawRequest(port, 'G{T /pot HTTP/1.1\r\nHost: a.com\r\n\r\n')).status, 400);
});

t.test('an HTTP/1.1 request without Host is answered 400', async (t) => {
  t.equal((await rawRequest(port, 'GET /x HTTP/1.1\r\nConnection: close\r\n\r\n')).status, 400);
});

t.test('CONNECT is refused with 405', async (t) => {
  t.equal((await rawRequest(port, 'CONNECT a.com:443 HTTP/1.1\r\nHost: a.com:443\r\n\r\n')).status, 405);
});

t.test('an idle keep-alive client is disconnected after the keep-alive timeout', async (t) => {
  const r = await rawRequest(port, 'GET /idle HTTP/1.1\r\nHost: a.com\r\n\r\n', { timeoutMs: 6000 });
  t.equal(r.status, 200);
  t.ok(r.closed, 'the server closed the idle connection');
});

t.test('a client that never finishes its request head is timed out with 408', async (t) => {
  const r = await rawRequest(port, 'GET /slow HTTP/1.1\r\nHost: a.com\r\n', { timeoutMs: 8000 });
  t.ok(r.closed, 'the connection was closed by the server');
  t.equal(r.status, 408);
  t.match(r.text, /408 Request Timeout/);
});

t.test('a client that never finishes its request body is timed out with 408 after requestTimeout', async (t) => {
  const r = await rawRequest(port, 'POST /slow-body HTTP/1.1\r\nHost: a.com\r\nContent-Length: 100\r\n\r\nonly-this', { timeoutMs: 9000 });
  t.ok(r.closed, 'the connection was closed by the server');
  t.equal(r.status, 408);
  t.notOk(origin.seen.some((s) => s.url === '/slow-body'), 'the origin never got a complete request');
});
