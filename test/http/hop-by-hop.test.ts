// One hop-by-hop list (lib/http/hop-by-hop.ts) for the proxy and the cache: what the proxy does
// not forward, the cache does not copy from a 304 either (they differed on HTTP2-Settings).
import t from 'tap';
import { connectionListed, connectionLists, isHopByHop } from '../../lib/http/hop-by-hop.js';
import { endToEndResponseHeaders } from '../../lib/pipeline/parts/hop-by-hop.js';
import { mergeNotModified } from '../../lib/cache/policy/index.js';

/** RFC 9110 7.6.1, the older lists' additions (RFC 2616 13.5.1) and the h2c upgrade's field. */
const HOP_BY_HOP = [
  'connection', 'proxy-connection', 'keep-alive', 'te', 'transfer-encoding', 'upgrade',
  'trailer', 'proxy-authenticate', 'proxy-authorization', 'http2-settings',
];

t.test('the list holds what RFC 9110 7.6.1 names and the older lists added', async (t) => {
  for (const name of HOP_BY_HOP) t.ok(isHopByHop(name), name);
  for (const name of ['content-length', 'host', 'expect', 'x-kept']) t.notOk(isHopByHop(name), name);
});

t.test('the proxy and the cache drop the same fields: every hop-by-hop one and those Connection names', async (t) => {
  const fields: Record<string, string> = { connection: 'close, X-Named', 'x-named': '1', 'x-kept': '2' };
  for (const name of HOP_BY_HOP) fields[name] ??= 'v';
  const forwarded = Object.keys(endToEndResponseHeaders(fields)).sort();
  const merged = Object.keys(mergeNotModified({ etag: '"a"' }, fields)).filter((n) => n !== 'etag').sort();
  t.same(forwarded, ['x-kept']);
  t.same(merged, forwarded);
});

t.test('the fields a Connection value names', async (t) => {
  t.same(connectionListed(' close , X-A,,x-b, keep-alive'), new Set(['x-a', 'x-b']));
  t.same(connectionListed(['x-a', 'x-c']), new Set(['x-a', 'x-c']));
  t.equal(connectionListed('close'), null);
  t.equal(connectionListed(undefined), null);
  t.ok(connectionLists('close, \tX-A ,x-b', 'x-a'));
  t.ok(connectionLists('x-b,x-a', 'x-a'));
  t.notOk(connectionLists('x-ab, x', 'x-a'));
  t.notOk(connectionLists('', 'x-a'));
});
