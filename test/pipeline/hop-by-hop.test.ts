import t from 'tap';
import { endToEndRequestHeaders, endToEndResponseHeaders } from '../../lib/pipeline/parts/hop-by-hop.js';

t.test('hop-by-hop fields and the fields Connection names are not forwarded', async (t) => {
  const out = endToEndRequestHeaders({
    host: 'a.com', connection: 'keep-alive, x-private', 'keep-alive': 'timeout=5', te: 'trailers',
    'transfer-encoding': 'chunked', upgrade: 'h2c', 'proxy-authorization': 'x', 'x-private': '1', 'x-kept': '2', accept: '*/*',
  });
  t.same(out, { 'x-kept': '2', accept: '*/*' });
});

t.test('response hop-by-hop fields are dropped and set-cookie arrays kept', async (t) => {
  const out = endToEndResponseHeaders({ connection: 'close', 'set-cookie': ['a=1', 'b=2'], 'content-type': 'text/plain', trailer: 'x' });
  t.same(out, { 'set-cookie': ['a=1', 'b=2'], 'content-type': 'text/plain' });
});

t.test('Expect is not forwarded to the origin (the client already got its 100 Continue)', async (t) => {
  const out = endToEndRequestHeaders({ host: 'a.com', expect: '100-continue', 'content-length': '3' });
  t.same(out, { 'content-length': '3' });
});

t.test('an HTTP/2 request\'s pseudo-headers are never forwarded as fields', async (t) => {
  const out = endToEndRequestHeaders({ ':method': 'GET', ':path': '/x', ':scheme': 'https', ':authority': 'a.com', host: 'a.com', accept: '*/*' });
  t.same(out, { accept: '*/*' });
});
