// Compression rules in-process: Accept-Encoding negotiation (RFC 9110 12.5.3), what may be
// compressed, the fields of an encoded copy, and the bounded queue.
import t from 'tap';
import { gunzipSync } from 'node:zlib';
import {
  chooseEncoding, compressibleType, encodedHeaders, mayEncode, typeRules, varyWithAcceptEncoding, type CompressionRules,
} from '../../lib/cache/policy/encoding.js';
import { Encoder } from '../../lib/cache/encoder.js';
import type { CacheEntryMeta } from '../../lib/cache/store.js';

const ALL = ['br', 'zstd', 'gzip'] as const;

t.test('the coding the client weighs highest wins; equal weights go to the server order br, zstd, gzip', async (t) => {
  t.equal(chooseEncoding('gzip, deflate, br, zstd', ALL), 'br');
  t.equal(chooseEncoding('br;q=0.5, gzip', ALL), 'gzip');
  t.equal(chooseEncoding('gzip;q=0.8, zstd;q=0.9', ALL), 'zstd');
  t.equal(chooseEncoding('GZIP', ALL), 'gzip', 'codings are case-insensitive');
  t.equal(chooseEncoding('x-gzip', ALL), 'gzip', 'x-gzip is gzip');
  t.equal(chooseEncoding(['gzip', 'br'], ALL), 'br', 'repeated fields are one list');
  t.equal(chooseEncoding('gzip, br', ['gzip', 'br']), 'gzip', 'the configured order breaks ties');
});

t.test('q=0 refuses a coding, * stands for the codings not named', async (t) => {
  t.equal(chooseEncoding('br;q=0, gzip', ALL), 'gzip');
  t.equal(chooseEncoding('br;q=0, *', ALL), 'zstd');
  t.equal(chooseEncoding('*;q=0, gzip', ALL), 'gzip');
  t.equal(chooseEncoding('*', ALL), 'br');
  t.equal(chooseEncoding('br;q=0, zstd;q=0, gzip;q=0', ALL), 'identity');
});

t.test('identity: no field, an empty field, only unknown codings, or identity weighed higher', async (t) => {
  t.equal(chooseEncoding(undefined, ALL), 'identity');
  t.equal(chooseEncoding('', ALL), 'identity');
  t.equal(chooseEncoding('deflate, compress', ALL), 'identity');
  t.equal(chooseEncoding('identity', ALL), 'identity');
  t.equal(chooseEncoding('gzip;q=0.5, identity', ALL), 'identity');
  t.equal(chooseEncoding('gzip, identity;q=0', ALL), 'gzip');
  t.equal(chooseEncoding('identity;q=0, *;q=0', ALL), 'identity', 'nothing acceptable: the field is disregarded');
  t.equal(chooseEncoding('gzip', []), 'identity', 'no coding offered');
});

t.test('a member with a malformed weight is ignored rather than read as q=1', async (t) => {
  t.equal(chooseEncoding('br;q=2, gzip', ALL), 'gzip');
  t.equal(chooseEncoding('br;q=abc, gzip;q=0.1', ALL), 'gzip');
  t.equal(chooseEncoding('br;q=0.5000', ALL), 'identity');
});

const rules: CompressionRules = {
  ...typeRules(['text/*', 'application/json', 'application/*+xml', 'image/svg+xml']), codings: ALL, minSize: 10, maxSize: 1000,
};

t.test('compressible types: exact, type/* and type/*+suffix, parameters and case ignored', async (t) => {
  t.ok(compressibleType('text/html; charset=utf-8', rules));
  t.ok(compressibleType('Application/JSON', rules));
  t.ok(compressibleType('application/atom+xml', rules));
  t.ok(compressibleType('image/svg+xml', rules));
  t.notOk(compressibleType('image/png', rules));
  t.notOk(compressibleType('application/jsonx', rules));
  t.notOk(compressibleType('application/+xml', rules));
  t.notOk(compressibleType(undefined, rules));
});

const meta = (over: Partial<CacheEntryMeta> = {}, headers: Record<string, string> = {}): CacheEntryMeta => ({
  key: { vhost: 'a', url: '/' }, variantKey: '', vary: [], status: 200, headers: { 'content-type': 'text/plain', ...headers },
  requestTime: 1, cachedAt: 1, staleAt: 2, deleteAt: 3, size: 100, ...over,
});

t.test('only complete 200s of compressible types within the sizes, not encoded, without no-transform, are compressed', async (t) => {
  t.ok(mayEncode(meta(), rules, false));
  t.ok(mayEncode(meta({}, { 'content-encoding': 'identity' }), rules, false));
  t.notOk(mayEncode(meta(), rules, true), 'no-transform');
  t.notOk(mayEncode(meta({}, { 'content-encoding': 'gzip' }), rules, false), 'encoded by the origin');
  t.notOk(mayEncode(meta({ size: 9 }), rules, false), 'below minSize');
  t.notOk(mayEncode(meta({ size: 1001 }), rules, false), 'above maxSize');
  t.notOk(mayEncode(meta({ status: 404 }), rules, false));
  t.notOk(mayEncode(meta({}, { 'content-type': 'image/png' }), rules, false));
  t.notOk(mayEncode(meta({ vary: ['*'] }), rules, false));
  t.notOk(mayEncode(meta({ variantKey: '\u0003br\u0003' }), rules, false), 'an encoded copy itself');
});

t.test('an encoded copy has its coding, Vary with Accept-Encoding, a suffixed entity tag and no identity digests', async (t) => {
  const h = encodedHeaders({ etag: '"v1"', vary: 'Cookie', 'content-md5': 'x', 'content-length': '100', 'content-type': 'text/plain' }, 'br', 40);
  t.strictSame(h, { 'content-type': 'text/plain', 'content-encoding': 'br', 'content-length': '40', vary: 'Cookie, Accept-Encoding', etag: '"v1-br"' });
  t.equal(encodedHeaders({ etag: 'W/"v1"' }, 'gzip', 1).etag, 'W/"v1-gzip"');
  t.equal(encodedHeaders({ etag: 'broken' }, 'gzip', 1).etag, undefined, 'a malformed tag is dropped, never kept for two representations');
  t.equal(varyWithAcceptEncoding('accept-encoding'), 'accept-encoding', 'added once');
  t.equal(varyWithAcceptEncoding(undefined), 'Accept-Encoding');
});

t.test('the queue compresses once per key, bounds what waits and refuses beyond it', async (t) => {
  const enc = new Encoder({ concurrency: 1, maxQueued: 1, level: { gzip: 1, br: 1, zstd: 1 } });
  const body = Buffer.from('x'.repeat(5000));
  let reads = 0;
  const read = async (): Promise<Buffer> => { reads++; return body; };
  const a = enc.encode('a', 'gzip', read, (out) => out);
  const joined = enc.encode('a', 'gzip', read, (out) => out);
  const b = enc.encode('b', 'gzip', read, (out) => out);
  t.equal(enc.encode('c', 'gzip', read, (out) => out), undefined, 'one running, one waiting: the third is refused');
  t.strictSame(enc.load, { running: 1, queued: 1 });
  t.equal(joined, a, 'the same key joins the job');
  t.strictSame(gunzipSync((await a)!), body);
  t.strictSame(gunzipSync((await b)!), body);
  t.equal(reads, 2);
  t.strictSame(enc.load, { running: 0, queued: 0 });
  t.not(enc.encode('c', 'gzip', read, (out) => out), undefined, 'accepted again once the queue drained');
});

t.test('a job whose body cannot be read fails alone and frees its place in the queue', async (t) => {
  const enc = new Encoder({ concurrency: 1, maxQueued: 0, level: { gzip: 1, br: 1, zstd: 1 } });
  const failing = enc.encode('gone', 'br', () => Promise.reject(new Error('body file vanished')), (out) => out);
  await t.rejects(failing!, /vanished/);
  t.strictSame(enc.load, { running: 0, queued: 0 });
  const next = enc.encode('next', 'zstd', async () => Buffer.from('y'.repeat(3000)), (out) => out.length);
  t.ok((await next!) < 3000, 'the next job runs');
});
