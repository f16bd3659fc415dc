// meta.settingTrace (document 2): a request whose path ends in the keyword is served as the
// request without it, but the client gets 422 with a JSON account of what happened: the answer
// the request would have had (code and fields) and, per virtual host it went through, each rule
// that matched. The rule stages record matches with `tx.trace?.matched(vhost, path, entry)`.
// Only a traced request pays anything here: the answer is caught on its own response object.
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { RecordFields } from '../../record/transaction.js';

/**
 * What the trace reads and sets of the transaction: its record, the URL it serves, the trace. A
 * shape of its own: the transaction names SettingTrace, so this module does not name it back.
 */
interface Traced extends Omit<RecordFields, 'url'> {
  url: string;
  trace: SettingTrace | undefined;
}

interface TraceSetting { path: string; matchingList: unknown[] }
interface TraceItem { vhost: string; setting: TraceSetting[] | null }

export class SettingTrace {
  readonly items: TraceItem[] = [];

  /** The request reached this host (an item with no match unless a rule matches there). */
  visit(vhost: string): void {
    const last = this.items[this.items.length - 1];
    if (last?.vhost !== vhost) this.items.push({ vhost, setting: null });
  }

  /**
   * A rule matched: `path` names the setting (`hosting.urlRewrites`,
   * `functions.network.http.frontEnd.modify` ...), `entry` the matching entry as written.
   */
  matched(vhost: string, path: string, entry: unknown): void {
    this.visit(vhost);
    const item = this.items[this.items.length - 1]!;
    const list = (item.setting ??= []);
    let s = list.find((x) => x.path === path);
    if (s === undefined) list.push(s = { path, matchingList: [] });
    s.matchingList.push(entry);
  }
}

/**
 * When the URL's path ends in `/<keyword>`: takes the keyword off tx.url, starts the trace and
 * catches the answer. The path and query are otherwise kept (`/a/_trace_?x` serves `/a?x`).
 */
export function startTrace(tx: Traced, keyword: string): void {
  const url = tx.url;
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (!path.endsWith(keyword) || path.charCodeAt(path.length - keyword.length - 1) !== 47 /* / */) return;
  const stem = path.slice(0, path.length - keyword.length - 1);
  tx.url = (stem === '' ? '/' : stem) + (q < 0 ? '' : url.slice(q));
  const trace = tx.trace = new SettingTrace();
  if (tx.host !== undefined) trace.visit(tx.host.name);
  catchAnswer(tx, trace);
}

type Field = { key: string; value: string };
type Head = { code: number; headers: Field[] };

function pushField(out: Field[], key: string, v: unknown): void {
  if (v === undefined || v === null) return;
  if (Array.isArray(v)) for (const one of v) out.push({ key, value: String(one) });
  else out.push({ key, value: String(v) });
}

/** The fields of a head: those set on the response, then writeHead's (an object or a flat list). */
function fieldsOf(res: ServerResponse, f: unknown): Field[] {
  const out: Field[] = [];
  const set = res.getHeaders();
  for (const key of Object.keys(set)) pushField(out, key, set[key]);
  if (Array.isArray(f)) {
    for (let i = 0; i + 1 < f.length; i += 2) pushField(out, String(f[i]).toLowerCase(), f[i + 1]);
  } else if (typeof f === 'object' && f !== null) {
    const o = f as OutgoingHttpHeaders;
    for (const key of Object.keys(o)) pushField(out, key.toLowerCase(), o[key]);
  }
  return out;
}

/**
 * Replaces the response's head and body writes for this one response: what the stages write is
 * noted (code, fields) and dropped, and the end sends the 422 trace instead.
 */
function catchAnswer(tx: Traced, trace: SettingTrace): void {
  const res = tx.res as ServerResponse;
  const realWriteHead = res.writeHead;
  const realEnd = res.end;
  const head: Head = { code: 0, headers: [] };
  const r = res as unknown as Record<string, unknown>;
  r.writeHead = (code: number, reason?: unknown, fields?: unknown): ServerResponse => {
    head.code = code;
    head.headers = fieldsOf(res, typeof reason === 'object' && reason !== null ? reason : fields);
    return res;
  };
  r.write = (_chunk: unknown, enc?: unknown, cb?: unknown): boolean => {
    const done = typeof enc === 'function' ? enc : cb;
    if (typeof done === 'function') queueMicrotask(done as () => void);
    return true;
  };
  r.end = (...args: unknown[]): ServerResponse => {
    delete r.writeHead;
    delete r.write;
    delete r.end;
    if (head.code === 0) {
      head.code = res.statusCode;
      head.headers = fieldsOf(res, undefined);
    }
    for (const name of res.getHeaderNames()) res.removeHeader(name);
    const body = Buffer.from(JSON.stringify(traceBody(tx, trace, head)));
    realWriteHead.call(res, 422, { 'content-type': 'application/json', 'content-length': body.length, 'cache-control': 'no-store' });
    const cb = args.find((a) => typeof a === 'function') as (() => void) | undefined;
    (realEnd as (chunk?: Buffer, cb?: () => void) => void).call(res, tx.method === 'HEAD' ? undefined : body, cb);
    return res;
  };
}

function traceBody(tx: Traced, trace: SettingTrace, head: Head): Record<string, unknown> {
  if (tx.host !== undefined) trace.visit(tx.host.name);
  return {
    sessionId: tx.sessionId,
    'x-ctx-id': tx.ctxId,
    cachehit: tx.cacheResult ?? 'TCP_NONE',
    response: { code: head.code, headers: head.headers },
    trace: trace.items,
  };
}
