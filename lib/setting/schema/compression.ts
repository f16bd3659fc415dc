// `functions.compression`: compression at the edge (issue 28). CDNs compress text on the fly and
// keep the result; so does this server, on by default for the types every CDN compresses. The
// spec's own compression field (`functions.network.cache.compression.useOriginEncoding`) stays
// where it is: it is about what the origin sends, this block about what the edge makes.
import { Type } from 'typebox';
import { Bool, Int, Section } from './common.js';

/** `type/subtype`, `type/*` or `type/*+suffix`, lower case. */
const MEDIA_PATTERN = '^[a-z0-9][a-z0-9!#$&^_.+-]*/(\\*|\\*\\+[a-z0-9!#$&^_.+-]+|[a-z0-9][a-z0-9!#$&^_.+-]*)$';

const DEFAULT_COMPRESSIBLE_TYPES = [
  'text/*', 'application/json', 'application/*+json', 'application/javascript', 'application/x-javascript',
  'application/ecmascript', 'application/xml', 'application/*+xml', 'image/svg+xml',
];

export const CompressionSchema = Section({
  enable: Bool(true, 'compress stored answers of compressible types for clients that accept it; false: every answer goes out as stored'),
  types: Type.Array(Type.String({ pattern: MEDIA_PATTERN }), {
    default: DEFAULT_COMPRESSIBLE_TYPES,
    uniqueItems: true,
    description: 'media types compressed (Content-Type without parameters, lower case): `type/subtype`, `type/*` or `type/*+suffix`',
  }),
  encodings: Type.Array(Type.Union([Type.Literal('br'), Type.Literal('zstd'), Type.Literal('gzip')]), {
    default: ['br', 'zstd', 'gzip'],
    uniqueItems: true,
    maxItems: 3,
    description: 'content codings offered, in the order preferred when the client weighs them equally; [] offers none',
  }),
  minSize: Int(1024, { minimum: 0, description: 'bytes: smaller bodies are sent as stored (compression would gain little)' }),
  maxSize: Int(16 * 1024 * 1024, {
    minimum: 1,
    maximum: 256 * 1024 * 1024,
    description: 'bytes: larger bodies are sent as stored (a body is compressed whole, in memory)',
  }),
  level: Section({
    gzip: Int(6, { minimum: 1, maximum: 9, description: 'gzip level (zlib 1-9)' }),
    br: Int(5, { minimum: 0, maximum: 11, description: 'brotli quality (0-11)' }),
    zstd: Int(3, { minimum: 1, maximum: 19, description: 'zstd level (1-19)' }),
  }, 'compression effort per coding: each encoded copy is made once and stored, so it can be higher than on-the-fly compressors use'),
  queue: Section({
    concurrency: Int(2, { minimum: 1, maximum: 16, description: 'compressions running at once per worker and host (in libuv\'s thread pool, off the event loop)' }),
    maxQueued: Int(64, { minimum: 0, maximum: 4096, description: 'compressions waiting per worker and host; beyond them a client gets the stored (identity) answer' }),
    maxWait: Int(250, {
      minimum: 0,
      maximum: 60000,
      description: 'ms a client waits for the copy being made for it; then it gets the identity answer and the copy is still stored for the next ones',
    }),
  }, 'the bounded compression queue: under load answers degrade to identity instead of waiting'),
}, 'compression at the edge: each coding of a stored object is made once, off the event loop, stored beside it and served from the cache');
