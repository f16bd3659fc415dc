// functions.compression: its defaults, a host's override, and every bad value refused with its path.
import t from 'tap';
import { parseSetting } from '../../lib/setting-check/load.js';
import { resolveHosts } from '../../lib/setting/resolve.js';
import { issuesOf, minimal, minimalHost } from './fixtures/helpers.js';

t.test('compression is on by default for text, JSON, JavaScript, SVG and XML, with br, zstd and gzip', async (t) => {
  const c = parseSetting(minimal()).functions.compression;
  t.strictSame(c, {
    enable: true,
    types: ['text/*', 'application/json', 'application/*+json', 'application/javascript', 'application/x-javascript',
      'application/ecmascript', 'application/xml', 'application/*+xml', 'image/svg+xml'],
    encodings: ['br', 'zstd', 'gzip'],
    minSize: 1024,
    maxSize: 16 * 1024 * 1024,
    level: { gzip: 6, br: 5, zstd: 3 },
    queue: { concurrency: 2, maxQueued: 64, maxWait: 250 },
  });
});

t.test('a host turns compression off with enable false, the other hosts keep it', async (t) => {
  const s = parseSetting({ hosting: [{ ...minimalHost, functions: { compression: { enable: false } } }, { ...minimalHost, name: 'b.com' }] });
  const [a, b] = resolveHosts(s);
  t.equal(a!.functions.compression.enable, false);
  t.equal(a!.functions.compression.minSize, 1024);
  t.equal(b!.functions.compression.enable, true);
});

t.test('every bad compression value is refused with its JSON path', async (t) => {
  const bad = (compression: unknown): string[] => issuesOf({ ...minimal(), functions: { compression } }).map((i) => i.path);
  t.strictSame(bad({ enable: 'yes' }), ['functions.compression.enable']);
  t.strictSame(bad({ types: ['text'] }), ['functions.compression.types[0]']);
  t.strictSame(bad({ types: ['Text/HTML'] }), ['functions.compression.types[0]']);
  t.strictSame(bad({ types: ['text/*', 'text/*'] }), ['functions.compression.types']);
  t.strictSame(bad({ encodings: ['deflate'] }), ['functions.compression.encodings[0]']);
  t.strictSame(bad({ encodings: ['br', 'br'] }), ['functions.compression.encodings']);
  t.strictSame(bad({ minSize: -1 }), ['functions.compression.minSize']);
  t.strictSame(bad({ maxSize: 0 }), ['functions.compression.maxSize']);
  t.strictSame(bad({ level: { gzip: 10 } }), ['functions.compression.level.gzip']);
  t.strictSame(bad({ level: { br: 12 } }), ['functions.compression.level.br']);
  t.strictSame(bad({ level: { zstd: 0 } }), ['functions.compression.level.zstd']);
  t.strictSame(bad({ queue: { concurrency: 0 } }), ['functions.compression.queue.concurrency']);
  t.strictSame(bad({ queue: { maxQueued: -1 } }), ['functions.compression.queue.maxQueued']);
  t.strictSame(bad({ queue: { maxWait: 1.5 } }), ['functions.compression.queue.maxWait']);
  t.strictSame(bad({ gzip: true }), ['functions.compression.gzip']);
  t.strictSame(issuesOf({ hosting: [{ ...minimalHost, functions: { compression: { minSize: 'big' } } }] }).map((i) => i.path),
    ['hosting[0].functions.compression.minSize']);
});
