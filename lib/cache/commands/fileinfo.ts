// The cache file record of `/monitoring/fileinfo` (document 1): one record per stored variant.
// Fields this server has no state for are fixed, and say so (README, "fileinfo"): `File-Opened`
// N (no descriptor is held for an object: each read opens and closes its own stream),
// `OriginalHeaders` `-` (there is no cacheOriginal option: the origin's end-to-end fields are
// all stored), `State` never `Error` (the index has no error state for an entry).
import { responseDirectives } from '../policy/index.js';
import type { DiskRecord } from '../disk/disk-object.js';
import { FLAG_HARDPURGE, FLAG_PURGE, INVALIDATED_HARDPURGED } from '../prefix.js';
import type { CacheEntryMeta, StoredHeaders } from '../store.js';
import { initialAge, parseHttpDate } from '../policy/index.js';
import { parseContentRange, spanBase } from '../policy/partial.js';

const yn = (b: boolean): 'Y' | 'N' => (b ? 'Y' : 'N');
const pad = (n: number): string => String(n).padStart(2, '0');

/** `[ <yyyy.mm.dd hh:mm:ss>, <seconds relative to now> ]`; `[ 0, 0 ]` when unknown. */
function timeField(ms: number | undefined, now: number): [string, number] | [0, 0] {
  if (ms === undefined || !Number.isFinite(ms) || ms <= 0) return [0, 0];
  const d = new Date(ms);
  const text = `${d.getFullYear()}.${pad(d.getMonth() + 1)}.${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return [text, Math.round((ms - now) / 1000)];
}

function header(h: StoredHeaders, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

function cacheControlField(h: StoredHeaders): string | number {
  const cc = responseDirectives(h);
  if (cc.noCache !== undefined) return 'no-cache';
  if (cc.sMaxage !== undefined) return cc.sMaxage;
  if (cc.maxAge !== undefined) return cc.maxAge;
  return 'not-specified';
}

export interface FileInfoContext { now: number; useOriginEncoding: boolean; smallFileMax: number; downloaders: number }

export function fileRecord(e: CacheEntryMeta & Partial<DiskRecord>, ctx: FileInfoContext): Record<string, unknown> {
  const h = e.headers;
  const flags = e.flags ?? (e.invalidated === 1 ? FLAG_PURGE : 0);
  // A hard-purge tombstone: the row without its body, kept until the next fetch replaces it.
  const gone = e.invalidated === INVALIDATED_HARDPURGED;
  const onDisk = e.path !== undefined && !gone;
  const lastModified = parseHttpDate(header(h, 'last-modified'));
  const expires = parseHttpDate(header(h, 'expires'));
  return {
    URI: e.key.url,
    'Accept-Encoding': yn(e.vary.includes('accept-encoding')),
    UseOriginEncoding: yn(ctx.useOriginEncoding),
    RefCount: ctx.downloaders,
    Size: Number(header(h, 'content-length') ?? e.size),
    CachedSize: e.size,
    'Disk-Index': e.disk ?? -1,
    FID: e.fid ?? '-',
    LocalPath: e.path ?? '-',
    HashKey: e.hashKey ?? '-',
    VHost: e.key.vhost,
    'File-Opened': 'N',
    'File-Updating': ctx.downloaders > 0 ? 'updating' : '-',
    'Downloader-Count': ctx.downloaders,
    LastAccess: timeField(e.lastAccess ?? e.cachedAt, ctx.now),
    CreatedTime: timeField(e.createdAt ?? e.cachedAt, ctx.now),
    UpdateTime: timeField(e.updatedAt ?? e.cachedAt, ctx.now),
    'TTL-Left': timeField(e.staleAt, ctx.now),
    LastModifiedTime: timeField(Number.isNaN(lastModified) ? undefined : lastModified, ctx.now),
    ExpireTime: timeField(Number.isNaN(expires) ? undefined : expires, ctx.now),
    ResponseCode: e.status,
    ContentType: header(h, 'content-type') ?? '-',
    CacheControl: cacheControlField(h),
    ETag: header(h, 'etag') ?? '-',
    NoMoreExist: yn(gone),
    LocalFileExist: yn(!gone && (onDisk || e.status !== 200)),
    // A hard-purge tombstone holds no content until the next fetch fills it.
    State: gone ? 'Not Init' : 'Cached',
    SmallFile: yn(e.size <= ctx.smallFileMax),
    Remove: yn(gone),
    Deleted: yn(gone),
    AddedSize: yn(!gone),
    TransferEncoding: yn(header(h, 'content-length') === undefined),
    Compression: header(h, 'content-encoding') ?? '-',
    Purge: yn((flags & FLAG_PURGE) !== 0),
    HardPurge: yn((flags & FLAG_HARDPURGE) !== 0),
    // Refreshes send If-Modified-Since only from a stored Last-Modified (buildRevalidationHeaders).
    'Ignore-IMS': yn(Number.isNaN(lastModified)),
    Fragmented: yn(e.status === 206),
    'Redirect-Location': header(h, 'location') ?? '-',
    'Content-Disposition': header(h, 'content-disposition') ?? '-',
    NoCache: yn(responseDirectives(h).noCache !== undefined),
    CorrectedInitAge: String(Math.round(initialAge({ headers: h, requestTime: e.requestTime, cachedAt: e.cachedAt }))),
    OriginalHeaders: '-',
  };
}

type Entry = CacheEntryMeta & Partial<DiskRecord>;

/**
 * The records of a URL's entries: the spans of an object stored in pieces (stored 206s, one per
 * piece) make one record of that object, `Fragmented: Y`, `Size` its whole length, `CachedSize`
 * the bytes its pieces hold, the fields of its newest piece.
 */
export function fileRecords(entries: readonly Entry[], ctx: FileInfoContext): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const objects = new Map<string, Entry[]>();
  for (const e of entries) {
    const base = e.status === 206 ? spanBase(e.variantKey) : undefined;
    if (base === undefined) { out.push(fileRecord(e, ctx)); continue; }
    const list = objects.get(base);
    if (list === undefined) objects.set(base, [e]);
    else list.push(e);
  }
  for (const pieces of objects.values()) {
    pieces.sort((a, b) => b.cachedAt - a.cachedAt);
    const newest = pieces[0]!;
    const r = fileRecord(newest, ctx);
    r.CachedSize = cachedBytes(pieces);
    r.LocalPath = pieces.length === 1 ? r.LocalPath : `${pieces.length} pieces`;
    out.push(r);
  }
  return out;
}

/** Bytes the spans cover together (spans may overlap). */
function cachedBytes(pieces: readonly Entry[]): number {
  const spans = pieces.map((p) => {
    const cr = p.headers['content-range'];
    return parseContentRange(Array.isArray(cr) ? undefined : cr);
  }).filter((s) => s !== undefined).sort((a, b) => a.start - b.start);
  let bytes = 0;
  let reach = -1;
  for (const s of spans) {
    if (s.end <= reach) continue;
    bytes += s.end - Math.max(s.start, reach + 1) + 1;
    reach = s.end;
  }
  return bytes;
}
