// Step "pagedesk" (document 3): a request whose URL carries `/<keyword>/edit...` on a host with
// pagedesk enabled, after the request rules (steps.ts); a host without pagedesk pays one
// property test. edit/query and templates are answered here;
// edit/default and the extractions go on to the cache stages as requests for the edit URL,
// whose "origin" is the host's PagedeskRuntime (tx.pagedesk): the edit is cached under its own
// key, the source under its own, and the origin is asked for the source only.
import { CommandError, commandAt, parseCommand, type ParsedCommand } from '../pagedesk/command.js';
import type { PagedeskRuntime } from '../pagedesk/producer.js';
import { escapeHtml } from '../pagedesk/text.js';
import { reportError } from '../log/global/report.js';
import { sendError } from './parts/respond.js';
import type { Transaction } from './parts/transaction.js';
import { Upload } from './parts/upload.js';
import { DONE, type Next } from './parts/runtime-state.js';
import { TCP_NONE } from '../cache/policy/results.js';

/** edit/query bodies when maxSourceSize is 0 (no limit): still read whole, so bounded. */
const QUERY_CEILING = 64 * 1024 * 1024;

/**
 * Step "pagedesk": a command is answered here, or goes on as a request for the edit URL (before
 * the network rules: a bypassed edit is still an edit, only not cached). A fallback's new URL is
 * looked at anew.
 */
export function pagedeskStep(tx: Transaction): Next {
  if (tx.pagedesk !== undefined) tx.pagedesk = undefined;
  const rt = tx.host.pagedesk;
  return rt !== undefined && servePagedesk(tx, rt) ? DONE : 'modify';
}

/** Returns true when it answered (or is answering) the request; false: serve it on. */
function servePagedesk(tx: Transaction, rt: PagedeskRuntime): boolean {
  const at = commandAt(tx.url, rt.keyword);
  if (at < 0) return false;
  let parsed: ParsedCommand;
  try {
    parsed = parseCommand(tx.url, rt.keyword, at);
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    answerError(tx, 400, err.message);
    return true;
  }
  const { command } = parsed;
  const method = tx.req.method;
  if (command.kind === 'query') {
    if (method !== 'POST') { answerError(tx, 405, 'edit/query takes POST with a text/plain body', { allow: 'POST' }); return true; }
    editQuery(tx, rt);
    return true;
  }
  if (method !== 'GET' && method !== 'HEAD') { answerError(tx, 405, `${command.kind === 'template' ? 'templates' : 'edits'} take GET or HEAD`, { allow: 'GET, HEAD' }); return true; }
  if (command.kind === 'template') { answerTemplate(tx, rt, command.name, parsed.source); return true; }
  if (command.kind === 'extract' && !rt.setting.dom.extract.enable) { answerError(tx, 403, 'extraction is not enabled (dom.extract.enable)'); return true; }
  tx.pagedesk = rt;
  return false;
}

function answerError(tx: Transaction, status: number, message: string, extra?: Record<string, string>): void {
  tx.cacheResult = TCP_NONE;
  tx.status = status;
  sendError(tx.res, status, extra, false, `${status} pagedesk: ${message}\n`);
}

function answer(tx: Transaction, type: string, body: Buffer): void {
  tx.cacheResult = TCP_NONE;
  tx.status = 200;
  tx.res.writeHead(200, { 'content-type': type, 'content-length': body.length, 'cache-control': 'no-store' });
  tx.res.end(tx.req.method === 'HEAD' ? undefined : body);
}

/** The URL `${URL}` stands for: urlScheme (or the client's scheme), the Host, the source URL. */
function requestUrl(tx: Transaction, rt: PagedeskRuntime, source: string): string {
  const scheme = rt.setting.meta.urlScheme ?? (tx.connection.tls === undefined ? 'http' : 'https');
  return `${scheme}://${tx.req.headers.host ?? tx.host.name}${source}`;
}

function answerTemplate(tx: Transaction, rt: PagedeskRuntime, name: string, source: string): void {
  const t = rt.setting.template;
  if (!t.enable) { answerError(tx, 403, 'templates are not enabled (template.enable)'); return; }
  const found = t.list.find((x) => x.name === name);
  if (found === undefined) { answerError(tx, 404, `no template named "${name}"`); return; }
  const url = requestUrl(tx, rt, source);
  // The URL comes from the client: written as text of the document's kind, never as markup.
  const value = found.type === 'json' ? JSON.stringify(url).slice(1, -1) : escapeHtml(url);
  const body = found.body.split('${URL}').join(value);
  answer(tx, found.type === 'json' ? 'application/json' : 'text/html; charset=utf-8', Buffer.from(body));
}

function editQuery(tx: Transaction, rt: PagedeskRuntime): void {
  const type = String(tx.req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'text/plain') { answerError(tx, 415, 'edit/query takes Content-Type: text/plain'); return; }
  const max = rt.maxSourceBytes > 0 ? rt.maxSourceBytes : QUERY_CEILING;
  const upload = new Upload(tx, { ...tx.host.upload, bufferUpTo: max });
  upload.take().then((body) => {
    if (body === undefined) return;
    if (!Buffer.isBuffer(body)) {
      tx.cacheResult = TCP_NONE;
      tx.status = 413;
      sendError(tx.res, 413, undefined, true, `413 pagedesk: the body is larger than maxSourceSize (${max} bytes)\n`);
      return;
    }
    upload.stop();
    return rt.edit(body.toString('utf8'), undefined, tx.host.name).then((r) => {
      if (r.outcome === 'edited') {
        answer(tx, r.type === 'plain' ? 'text/plain; charset=utf-8' : 'text/html; charset=utf-8', Buffer.from(r.text));
        return;
      }
      if (r.outcome === 'unedited') reportError({ code: '6002', vhost: tx.host.name, url: tx.url, ctxId: tx.ctxId, detail: r.reason });
      answer(tx, 'text/html; charset=utf-8', body);
    });
  }).catch(() => { if (!tx.res.headersSent) answerError(tx, 500, 'edit failed'); });
}
