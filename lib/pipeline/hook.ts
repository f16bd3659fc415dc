// Step "hook" (functions.hook, document 2): for the requests its matchingList selects, the
// request document is POSTed to the hook and its answer decides what happens next: an answer of
// its own (response.code other than 100), or the request goes on redefined (header edits, host,
// cache key and TTL, the origin request, the logged cache result, userData for the access log).
// A host without a hook pays one property test here; a request the list leaves out costs one match.
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { OriginTrace, traceAnswered, traceFailed, type OriginNote } from '../origin/index.js';
import { OriginError } from '../origin/index.js';
import { applyEdits } from '../network/header-edit.js';
import { HookAnswerError, parseHookAnswer, type HookRedefinition } from '../hook/answer.js';
import type { HookRule } from '../hook/rule.js';
import { HOOK_TRACE, logHookCall } from './finish.js';
import type { HostRuntime } from './parts/host-runtime.js';
import { proxyToOrigin } from './parts/proxy.js';
import { routeByName, SUSPENDED, type Next } from './parts/runtime-state.js';
import { ruleInput } from './parts/rule-input.js';
import { sendError } from './parts/respond.js';
import type { Transaction } from './parts/transaction.js';
import { Upload } from './parts/upload.js';
import { TCP_DENIED, TCP_DENY, TCP_ERROR } from '../cache/policy/results.js';

/** The largest hook answer read (a redefinition is a few hundred bytes). */
const MAX_ANSWER_BYTES = 1 << 20;
const ALLOW = 'GET, HEAD, POST';
/** Sent to the hook with the x-ctx-id; a hook calling the runtime back sends it (receive.ts reads it). */
export const HOOK_CTX_HEADER = 'x-svcx-forwarded-context-id';
/**
 * Directives the hook's HTTP answer carries (document 2's "the pipe carries a nolog directive"):
 * a comma-separated list; `nolog` keeps this call out of the hook log (the origin log's hook1 line).
 */
const HOOK_DIRECTIVE_HEADER = 'x-svcx-directive';

function saysNolog(v: string | string[] | undefined): boolean {
  if (v === undefined) return false;
  const text = Array.isArray(v) ? v.join(',') : v;
  return text.split(',').some((d) => d.trim().toLowerCase() === 'nolog');
}

type Fields = Record<string, string | string[] | number | undefined>;
/** A host by name as receive routes it. */
type Route = (name: string) => HostRuntime | undefined;

/**
 * Whether the hook is called for this request. Only GET, HEAD and a POST the cache takes
 * (cachingKey.postMethod: its body is read whole) are hooked: a bypassed POST needs no hooking
 * (document 2), other methods pass as they do without a hook. A sibling's hand-off and a
 * fallback's second pass were hooked already.
 */
export function hookSelects(tx: Transaction, rule: HookRule): boolean {
  if (tx.fromSibling || tx.hookLinked !== '') return false;
  const m = tx.method;
  if (m !== 'GET' && m !== 'HEAD' && (m !== 'POST' || tx.host.net?.post === undefined)) return false;
  const list = rule.matching;
  if (list === undefined) return true;
  // matchingList patterns are written without the host name: they see the URL alone.
  const input = ruleInput(tx);
  const host = input.host;
  input.host = '';
  input.subject = undefined;
  let hit = false;
  for (let i = 0; i < list.length && !hit; i++) hit = list[i]!.match(input) !== undefined;
  input.host = host;
  input.subject = undefined;
  if (!hit) tx.hookLinked = 'n';
  return hit;
}

/**
 * Step "hook". Access control sends a denial here first (skipIfMatched.accessControl false: the
 * hook's own answer wins; when it says continue, the denial stands), bypass a bypassed request
 * (unless skipIfMatched.bypass: then it goes on to the origin); both asked hookSelects already.
 * Any other request the hook selects goes on to lookup once the hook let it. A sibling's hand-off
 * behind the hook carries the redefinition (tx.hook): it is not hooked again.
 */
export function hookStep(tx: Transaction): Next {
  const rule = tx.host.hook;
  if (tx.access === 2) callHook(tx, rule!, sendDenied);
  else if (tx.bypass !== 0) callHook(tx, rule!, proxyToOrigin);
  else if (rule !== undefined && tx.hook === undefined && hookSelects(tx, rule)) callHook(tx, rule, toLookup);
  else return 'lookup';
  return SUSPENDED;
}

/** The 403 of a denial that waited for the hook. */
function sendDenied(tx: Transaction): void {
  tx.cacheResult = TCP_DENIED;
  sendError(tx.res, 403);
}

function toLookup(tx: Transaction): void {
  tx.runtime.resume(tx, 'lookup');
}

/** `next`: the rest of the way once the hook let the request go on. */
function callHook(tx: Transaction, rule: HookRule, next: (tx: Transaction) => void): void {
  tx.hookLinked = 'y';
  const post = tx.method === 'POST' ? tx.host.net?.post : undefined;
  if (post === undefined) { send(tx, rule, undefined, next); return; }
  const upload = new Upload(tx, { ...tx.host.upload, bufferUpTo: post.max });
  const taken = post.max === 0 && tx.req.readableEnded ? Promise.resolve(Buffer.alloc(0)) : upload.take();
  taken.then((body) => {
    if (body === undefined) return;
    upload.stop();
    if (!Buffer.isBuffer(body)) {
      // The hook must see the whole body, and it is larger than the POST cache reads.
      (body as Readable).resume();
      tx.cacheResult = TCP_ERROR;
      sendError(tx.res, 413, undefined, true, `413 Content Too Large: a hooked POST body is at most ${post.max} bytes (cachingKey.postMethod.bodyContentLengthMax)\n`);
      return;
    }
    send(tx, rule, body, next);
  }, () => undefined);
}

/** The client's request head as received (document 2 `message`). */
function requestHead(req: IncomingMessage, url: string): string {
  let head = `${req.method ?? ''} ${url} HTTP/${req.httpVersion}\r\n`;
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.charCodeAt(0) !== 58 /* : HTTP/2 pseudo-header */) head += `${raw[i]}: ${raw[i + 1]}\r\n`;
  }
  return `${head}\r\n`;
}

function noteOf(tx: Transaction, rule: HookRule): OriginNote | undefined {
  if (!rule.log || tx.host.logs?.origin === undefined) return undefined;
  return {
    vhost: tx.host.logName, method: 'POST', url: rule.path, range: undefined, acceptEncoding: undefined, sessionId: tx.sessionId,
    ctxId: tx.ctxId, bypass: '-', sessionType: 'hook1', balance: '-',
  };
}

async function readAnswer(body: Readable): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > MAX_ANSWER_BYTES) {
      body.destroy();
      throw new HookAnswerError(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
    }
    parts.push(chunk as Buffer);
  }
  return Buffer.concat(parts).toString('utf8');
}

/**
 * Whether `name` is the serving host itself: its name (a facade's own too), an alias, or a name
 * one of its wildcard aliases covers and routing gives to no other host. A hook acts for its own
 * host only: naming another one would let it serve and store on that host, under any key and
 * lifetime (a tenant's hook writing into another tenant's cache).
 */
function ownName(host: HostRuntime, name: string, route: Route): boolean {
  if (name === host.name.toLowerCase() || name === host.logName.toLowerCase()) return true;
  for (const a of host.aliases) {
    const alias = a.toLowerCase();
    if (alias === name) return true;
    const wild = alias === '*' || (alias.startsWith('*.') && name.length >= alias.length && name.endsWith(alias.slice(1)));
    if (wild && route(name) === host) return true;
  }
  return false;
}

/** The answer parsed, and refused (HookAnswerError) when it names a host other than this one. */
function ownAnswer(text: string, host: HostRuntime, route: Route): HookRedefinition {
  const a = parseHookAnswer(text);
  if (a.vhost !== undefined && !ownName(host, a.vhost, route)) {
    throw new HookAnswerError(`vhost ${a.vhost} is not this host (${host.name} or one of its aliases): a hook acts for its own host only`);
  }
  return a;
}

/** Why the hook gave no usable answer: the client's status and the origin log's chain error. */
class HookFailure {
  constructor(readonly status: 403 | 510, readonly reason: string) {}
}

/**
 * The session timeouts bound each wait only (connect, the head, the gap between two chunks): a
 * hook trickling its answer would hold the client as long as it liked. The exchange as a whole is
 * aborted at HookRule.deadlineMs, and then fails as a slow hook does (403, a Receive-Timeout line).
 */
class Deadline {
  fired = false;
  private readonly timer: NodeJS.Timeout;

  constructor(ms: number, controller: AbortController) {
    this.timer = setTimeout(() => {
      this.fired = true;
      controller.abort(new OriginError('ORIGIN_TIMEOUT', 'Receive-Timeout', `hook answer not complete within ${ms / 1000} s (connectTimeout + receiveTimeout)`));
    }, ms);
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

function send(tx: Transaction, rule: HookRule, body: Buffer | undefined, next: (tx: Transaction) => void): void {
  const doc = {
    host: tx.host.name, clientIp: tx.clientAddress, sessionId: tx.sessionId, protocol: tx.protocol,
    message: requestHead(tx.req, tx.urlReceived), body: body === undefined ? null : body.toString('utf8'), param: rule.param,
    // Function chains are not served (rule-input.ts): no call is ever named in a URL.
    functions: null,
  };
  const trace = new OriginTrace(HOOK_TRACE);
  trace.note = noteOf(tx, rule);
  const controller = new AbortController();
  let clientLeft = false;
  const onClose = (): void => { if (!tx.res.writableFinished) { clientLeft = true; controller.abort(); } };
  tx.res.once('close', onClose);
  const deadline = new Deadline(rule.deadlineMs, controller);
  const settled = (): void => { deadline.stop(); tx.res.removeListener('close', onClose); };
  rule.client.request({
    method: 'POST', url: rule.path, body: Buffer.from(JSON.stringify(doc)), signal: controller.signal, trace,
    headers: { 'content-type': 'application/json', [HOOK_CTX_HEADER]: tx.ctxId },
  }).then(async (r) => {
    if (saysNolog(r.headers[HOOK_DIRECTIVE_HEADER])) trace.note = undefined;
    traceAnswered(trace, r.statusCode);
    if (r.statusCode !== 200) {
      r.body.resume();
      throw new HookFailure(403, `hook answered ${r.statusCode}`);
    }
    try {
      return ownAnswer(await readAnswer(r.body), tx.host, (name) => routeByName(tx, name));
    } catch (err) {
      if (err instanceof HookAnswerError) throw new HookFailure(510, err.message);
      throw new HookFailure(403, err instanceof OriginError ? `hook too slow: ${err.message}` : `hook answer broken: ${(err as Error).message}`);
    }
  }, (err: unknown) => {
    traceFailed(trace, err);
    throw new HookFailure(403, err instanceof OriginError ? `hook unreachable: ${err.sockError}` : `hook unreachable: ${(err as Error).message}`);
  }).then((answer) => {
    settled();
    const n = trace.note;
    if (n !== undefined) n.chainInfo = answer.cacheKey ?? (answer.cacheKey === null ? 'null' : undefined);
    logHookCall(trace);
    if (!tx.res.destroyed) apply(tx, rule, answer, body, next);
  }, (err: unknown) => {
    settled();
    const failure = err instanceof HookFailure ? err : new HookFailure(403, String(err));
    if (trace.note !== undefined) trace.note.chainError = failure.reason;
    // undici reports an answer body cut by the signal as its own abort (Client-Close): it was ours.
    if (deadline.fired) trace.sockError = 'Receive-Timeout';
    logHookCall(trace);
    if (clientLeft || tx.res.destroyed) return;
    tx.cacheResult = TCP_ERROR;
    const text = failure.status === 510 ? `510 Not Extended: ${failure.reason}\n` : undefined;
    sendError(tx.res, failure.status, undefined, false, text);
  });
}

function apply(tx: Transaction, rule: HookRule, a: HookRedefinition, clientBody: Buffer | undefined, next: (tx: Transaction) => void): void {
  const res = tx.res;
  if (a.end !== undefined) {
    tx.cacheResult = TCP_DENY;
    const e = a.end;
    const payload = Buffer.from(e.body);
    const headers: Fields = {};
    for (const f of e.headers) applyEdits(headers, [{ key: f.key, mode: 'add', value: f.value, match: undefined, replace: undefined }]);
    headers['content-length'] = payload.length;
    delete headers['transfer-encoding'];
    delete headers.connection;
    try {
      res.writeHead(e.code, headers as Record<string, string | string[] | number>);
    } catch {
      sendError(res, 510, undefined, false, '510 Not Extended: the hook answer carries a header node cannot send\n');
      return;
    }
    res.end(tx.method === 'HEAD' || e.code === 204 || e.code === 304 ? undefined : payload);
    return;
  }
  const clientMethod = tx.method === 'HEAD' ? 'GET' : tx.method;
  const o = a.originRequest;
  if (o !== undefined && o.method !== clientMethod && !rule.methodSwitchable) {
    tx.cacheResult = TCP_ERROR;
    sendError(res, 405, { allow: ALLOW }, false, `405 Method Not Allowed: the hook changed ${clientMethod} to ${o.method} and functions.hook.methodSwitchable is false\n`);
    return;
  }
  // `vhost` named this very host (ownAnswer): the request stays where it is.
  if (a.headerEdits.length > 0) applyEdits(tx.req.headers as Fields, a.headerEdits);
  // The origin request: originRequest, else the cache key when it is a path, else the client's.
  tx.url = o?.url ?? (a.cacheKey?.charCodeAt(0) === 47 /* / */ ? a.cacheKey : tx.url);
  const method = o?.method ?? clientMethod;
  tx.postBody = method === 'POST' ? (o?.body ?? clientBody ?? Buffer.alloc(0)) : undefined;
  tx.hook = a;
  next(tx);
}
