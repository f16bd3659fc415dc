// `functions`: defaults for all virtual hosts, overridden member by member by a host's own
// `functions`. Document 2 names the hook and a few network fields; the rest of the network
// block (limits, timeouts, TTLs) is ours, because the server needs them and the spec shows none.
import { Type } from 'typebox';
import { Bool, Formatted, Int, NullStr, Num, Obj, OneOf, Opt, Secs, Section, Str } from './common.js';
import { HostLogSchema } from './log.js';
import { PagedeskSchema } from './pagedesk.js';
import { Bypass, CachingKey, Modify } from './network.js';
import { AccessControlSchema } from './access-control.js';
import { CompressionSchema } from './compression.js';

const FrontEnd = Section({
  maxUrlLength: Int(8192, { minimum: 256, description: 'bytes of request line target; longer gets 414' }),
  maxHeaderSize: Int(16384, { minimum: 1024, description: 'bytes of request header fields; more gets 431' }),
  maxHeaderCount: Int(2000, { minimum: 1, description: 'request header field lines; more gets 431' }),
  keepAliveTimeout: Secs(60, 'idle keep-alive client connection timeout, seconds'),
  headersTimeout: Secs(10, 'seconds to receive the complete request head'),
  requestTimeout: Secs(300, 'seconds to receive the complete request'),
  bufferBodyUpTo: Int(65536, {
    minimum: 0,
    description: 'request bodies up to this many bytes are read whole before an origin connection is taken; of a larger body this much is read first; 0: stream at once',
  }),
  bodyMinRate: Section({
    bytesPerSecond: Int(500, { minimum: 0, description: 'slowest accepted request body upload; 0: no minimum' }),
    period: Num(20, { minimum: 1, description: 'seconds over which the upload rate is measured; a client below it for a whole period gets 408' }),
  }, 'minimum upload rate of request bodies'),
  http2: Section({
    enable: Bool(true, 'offer HTTP/2 (ALPN h2) beside HTTP/1.1 on the TLS service ports; false: HTTP/1.1 only'),
    cleartext: Bool(false, 'HTTP/2 with prior knowledge (h2c) on the plain service ports, beside HTTP/1.x'),
    maxConcurrentStreams: Int(128, { minimum: 1, maximum: 2 ** 31 - 1, description: 'SETTINGS_MAX_CONCURRENT_STREAMS: requests open at once on one connection' }),
    maxHeaderListSize: Int(65536, {
      minimum: 1024,
      maximum: 2 ** 31 - 1,
      description: 'SETTINGS_MAX_HEADER_LIST_SIZE: bytes of a request header list as HTTP/2 counts it (name + value + 32 per field, pseudo-headers too); larger: the stream is reset',
    }),
    initialWindowSize: Int(65535, {
      minimum: 1024,
      maximum: 2 ** 31 - 1,
      description: 'SETTINGS_INITIAL_WINDOW_SIZE: request body bytes a client may send on a stream ahead of what the server has read',
    }),
    settingsTimeout: Secs(10, 'seconds a client has to acknowledge the server\'s SETTINGS; then GOAWAY SETTINGS_TIMEOUT'),
  }, 'HTTP/2 on the client side; per connection, so only the global values apply'),
  bypass: Bypass,
  modify: Modify('header edits on the client side: request fields as received, response fields as sent'),
  accessControl: AccessControlSchema,
  answerFields: Section({
    requestId: Section({
      enable: Bool(false, 'every answer of the host carries the request id: the x-ctx-id of its log lines (access, origin, error logs)'),
      name: Formatted('svc-field-name', { default: 'x-ctx-id', description: 'the response field that carries the request id' }),
    }),
    nodeName: Section({
      enable: Bool(false, 'every answer of the host carries the name of the node that answered'),
      name: Formatted('svc-field-name', { default: 'x-svc-node', description: 'the response field that carries the node name' }),
      value: NullStr({ format: 'svc-field-value', description: 'the node name sent; null: the machine\'s host name' }),
    }),
  }, 'fields that tie an answer to its log lines and to the node that gave it, for debugging (ours)'),
}, 'client side of HTTP');

const BackEnd = Section({
  session: Section({
    connectTimeout: Secs(3, 'seconds to connect to an origin'),
    receiveTimeout: Secs(10, 'seconds of silence from an origin before the transaction fails'),
    reuseTimeout: Secs(60, 'seconds an idle origin connection is kept for reuse'),
    maxConnections: Int(256, { minimum: 1, description: 'connections per origin address and worker' }),
  }),
  health: Section({
    failCount: Int(3, { minimum: 1, description: 'consecutive failures that make an origin address Inactive' }),
    recoveryInterval: Secs(5, 'seconds between recovery attempts of an Inactive address'),
    inactiveTtl: Secs(600, 'seconds an Inactive address that does not recover stays listed'),
  }),
  forwardedFor: Bool(true, 'append the client address to X-Forwarded-For toward the origin'),
  modify: Modify('header edits on the origin side: request fields sent to the origin, response fields as received (before storing)'),
}, 'origin side of HTTP');

const Cache = Section({
  ttl: Section({
    default: Secs(0, 'TTL of a response without freshness information and no heuristic; seconds'),
    negative: Secs(10, 'TTL of error responses without freshness (404, 410; 5xx with negativeServerErrors); seconds'),
    negativeServerErrors: Bool(false, 'negative TTL also for 500, 502, 503, 504 (not cacheable by default)'),
    heuristicFraction: Num(0.1, { minimum: 0, maximum: 1, description: 'fraction of the Last-Modified age used as heuristic freshness' }),
    heuristicMax: Secs(86400, 'cap of heuristic freshness; seconds'),
    keep: Secs(3600, 'seconds a stale object is kept for revalidation after it expires'),
  }),
  honourNoCache: Bool(true, 'respect the no-cache response directive of the origin (false: ignore it)'),
  honourPrivate: Bool(true, 'do not store Cache-Control: private responses'),
  storeSetCookie: Bool(false, 'store Set-Cookie with a cached response and send it with every hit (false: only the client whose request fetched it gets it)'),
  cacheStatus: Section({
    enable: Bool(true, 'add this cache\'s member to the Cache-Status field (RFC 9211) of every answer of the host: hit, or fwd with the reason and fwd-status, ttl, stored, collapsed; a Cache-Status the origin sent is kept before it'),
    name: Type.String({
      default: 'svc',
      minLength: 1,
      maxLength: 128,
      pattern: '^[\\x20-\\x7e]*$',
      description: 'the name the member starts with (printable ASCII): written as a token when it is one, else as a quoted string',
    }),
    key: Bool(false, 'add key="<host><url>", the cache key the request was looked up under (after cachingKey): for debugging, it shows how URLs are normalised'),
  }, 'the Cache-Status response field (RFC 9211)'),
  cachingKey: CachingKey,
  compression: Section({
    useOriginEncoding: Bool(true, 'true: the origin gets the client\'s Accept-Encoding and the coding it answers with is kept; false: the origin is asked for identity and one stored copy serves every Accept-Encoding, encoded by the edge (functions.compression)'),
  }),
  purge: Section({
    purge2expire: OneOf(['NONE', 'ROOT', 'PATTERN', 'ALL'], 'NONE', 'which purges are turned into expire'),
    resCodeNoCtrlTarget: Int(200, { minimum: 100, maximum: 599, description: 'HTTP code of an invalidation that matched nothing' }),
  }),
  enablePurgeMethod: Bool(false, 'accept the PURGE method from clients'),
  tags: Section({
    enable: Bool(true, 'keep the cache tags the origin names in `fields` with each stored response, so that a purge by `tag=` finds them'),
    fields: Type.Array(Type.String({ minLength: 1, maxLength: 64, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" }), {
      default: ['Surrogate-Key', 'Cache-Tag'], maxItems: 8,
      description: 'origin response fields whose values are cache tags (space- or comma-separated); the same fields of a PURGE request name the tags to purge',
    }),
    strip: Bool(true, 'remove `fields` from the answers to clients (false: clients see them too)'),
  }, 'cache tags (surrogate keys): invalidation of every response the origin tagged'),
  limitMaxRange: Int(64 * 1024 * 1024, {
    minimum: 0,
    description: 'bytes: an object longer than this is fetched from the origin and stored in pieces of partSize by Range requests (fileinfo Fragmented: Y), and a client Range on a miss asks the origin for the pieces it needs; 0: objects are stored whole only and an origin 206 is never stored',
  }),
  partSize: Int(4 * 1024 * 1024, {
    minimum: 64 * 1024,
    maximum: 64 * 1024 * 1024,
    description: 'bytes per piece of an object stored in pieces; one piece is the most a client waits for before its first byte, and what a piece fetch in flight holds in memory',
  }),
}, 'cache behaviour');

const HookSchema = Section({
  enable: Bool(false),
  path: Opt(Str({ minLength: 1, description: 'URL of the hook function' })),
  skipIfMatched: Section({
    accessControl: Bool(false, 'no hook call when accessControl denies'),
    bypass: Bool(false, 'no hook call when the request is bypassed'),
  }),
  matchingList: Type.Union([Type.Array(Obj({ pattern: Str() })), Type.Null()], {
    default: null,
    description: 'conditions like urlRewrites without host name; null: every request',
  }),
  methodSwitchable: Bool(false, 'the hook may change the HTTP method; otherwise a change gives 405'),
  session: Section({
    connectTimeout: Int(3, { minimum: 0 }),
    receiveTimeout: Int(3, { minimum: 0 }),
    reuseTimeout: Int(60, { minimum: 0 }),
    param: NullStr({ description: 'serialised JSON given to the hook as the object param' }),
  }),
  log: Section({ enable: Bool(true) }),
});

const Statistics = Section({
  directory: Section({
    enable: Bool(false, 'count ClientTraffic.Traffic[] per statistics directory besides `/` (the whole host)'),
    depth: Int(1, { minimum: 1, maximum: 8, description: 'leading path segments that name a statistics directory (/a/ is depth 1, /a/b/ depth 2)' }),
    accum: Bool(false, 'true: a request counts in every directory level of its path up to depth; false: in its deepest one only'),
    maxDirectories: Int(64, { minimum: 1, maximum: 1024, description: 'directories counted per host and worker; requests under a directory beyond them count in `/` only' }),
  }, 'directory statistics (document 1 ClientTraffic Depth, Accum, Traffic[])'),
}, 'statistics of the host');

export const FunctionsSchema = Section({
  network: Section({
    http: Section({ frontEnd: FrontEnd, backEnd: BackEnd }),
    cache: Cache,
  }),
  hook: HookSchema,
  operations: Section({ log: HostLogSchema }),
  contents: Section({ pagedesk: PagedeskSchema }),
  statistics: Statistics,
  compression: CompressionSchema,
}, 'defaults for every virtual host; a host functions object overrides them member by member');
