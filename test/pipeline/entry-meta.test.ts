// The meta of a new stored object (parts/entry-meta.ts), in-process: the fetch step hands it the
// directives it parsed for the storable check, and the times must still follow the fields that
// are stored, which differ from the answer's when it names Cache-Control in no-cache="...".
import t from 'tap';
import { defaultPolicyOptions } from '../../lib/cache/policy/index.js';
import { newEntryMeta } from '../../lib/pipeline/parts/entry-meta.js';
import type { HostRuntime } from '../../lib/pipeline/parts/host-runtime.js';
import { storableDirectives } from '../../lib/pipeline/parts/rules.js';

const host = {
  cachePolicy: defaultPolicyOptions, useOriginEncoding: true, volatile: false, nonVolatileSize: 0, net: undefined,
} as unknown as HostRuntime;
const AT = Date.UTC(2026, 10, 29, 6, 0, 0);
const DATE = new Date(AT).toUTCString();

function metaOf(headers: Record<string, string>) {
  const cc = storableDirectives('GET', {}, 200, headers, host.cachePolicy);
  if (cc === undefined) throw new Error('not storable');
  return newEntryMeta({ vhost: 'h', url: '/a' }, 200, headers, {}, AT, AT, host, undefined, cc);
}

t.test('a stored answer is fresh for its max-age, with the directives parsed once', async (t) => {
  const meta = metaOf({ 'cache-control': 'max-age=600', date: DATE, 'content-length': '4' });
  t.equal(meta.staleAt, AT + 600_000);
  t.equal(meta.size, 4);
});

t.test('an answer that names Cache-Control in no-cache is timed by the fields that are stored, which lack it', async (t) => {
  const meta = metaOf({ 'cache-control': 'max-age=600, no-cache="cache-control"', date: DATE, etag: '"v1"' });
  t.equal(meta.headers['cache-control'], undefined, 'the named field is not stored');
  // Without its Cache-Control the stored copy states no lifetime: stale at once (revalidated on use).
  t.equal(meta.staleAt, AT);
  t.equal(meta.deleteAt, AT + defaultPolicyOptions.keep * 1000, 'kept for revalidation by its validator');
});
