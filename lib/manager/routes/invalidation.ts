// `/command` invalidation family (purge, expire, expireafter, hardpurge, POST purge) and
// `/monitoring/fileinfo` (document 1).
import { isBadTarget } from '../../cache/commands/targets.js';
import type { InvalidateKind } from '../../cache/commands/invalidate.js';
import { fail, HTTP, jsonReply, ok } from '../envelope.js';
import type { Route } from '../router.js';
import type { ApiReply, ApiRequest, InvalidationCommands, RouteContext } from '../types.js';
import { requireRunning } from './rt.js';

/**
 * `url` is the rest of the query string after `url=`: a target may carry its own query string
 * (`a.com/x?v=1&w=2`), which is why document 1 says to put `sec` before `url`.
 */
export function urlParam(query: string | undefined): string | null {
  const rawQuery = query ?? '';
  const at = rawQuery.startsWith('url=') ? 0 : rawQuery.indexOf('&url=');
  if (at < 0) return null;
  const raw = rawQuery.slice(at === 0 ? 4 : at + 5);
  try { return decodeURIComponent(raw.replace(/\+/g, ' ')); } catch { return raw; }
}

function secParam(query: string | undefined): number | 'bad' {
  const rawQuery = query ?? '';
  const before = rawQuery.split(/(^|&)url=/)[0] ?? '';
  const m = /(?:^|&)sec=([^&]*)/.exec(before);
  if (m === null) return 86400;
  const n = Number(m[1]);
  return Number.isInteger(n) && n > 0 ? n : 'bad';
}

async function invalidate(svc: InvalidationCommands, kind: InvalidateKind, url: string | null, ctx: RouteContext, req: ApiRequest,
  sec?: number, body?: Buffer): Promise<ApiReply> {
  requireRunning(ctx);
  let targets;
  try {
    targets = await svc.targets(url);
  } catch (err) {
    // An unknown virtual host in the URL is 502 for the purge family (README): the code's status.
    if (isBadTarget(err)) return fail(err.status, ctx.version, kind, 'query', err.message);
    throw err;
  }
  svc.recognized?.({ kind, async: false, url: url ?? '', targets, sec, request: { method: req.method, path: req.path, rawQuery: req.rawQuery, headers: req.headers, body } });
  const outcome = await svc.run(kind, targets, sec);
  const reply = ok(ctx.version, kind, 'query', outcome.result);
  return { ...reply, status: outcome.status };
}

export function invalidationRoutes(svc: InvalidationCommands): Route[] {
  const simple = (kind: InvalidateKind): Route => ({
    method: 'GET', path: `/command/${kind}`, name: kind, group: 'query',
    handler: (req: ApiRequest, ctx) => invalidate(svc, kind, urlParam(req.rawQuery), ctx, req),
  });
  return [
    simple('purge'), simple('expire'), simple('hardpurge'),
    {
      method: 'GET', path: '/command/expireafter', name: 'expireafter', group: 'query',
      handler: (req, ctx) => {
        const sec = secParam(req.rawQuery);
        if (sec === 'bad') return Promise.resolve(fail(HTTP.badRequest, ctx.version, 'expireafter', 'query', 'sec must be a positive integer'));
        return invalidate(svc, 'expireafter', urlParam(req.rawQuery), ctx, req, sec);
      },
    },
    {
      method: 'POST', path: '/command/purge', name: 'purge', group: 'query',
      handler: async (req, ctx) => {
        if (req.headers['content-length'] === undefined) return fail(HTTP.badRequest, ctx.version, 'purge', 'query', 'Content-Length required');
        const type = req.headers['content-type'] ?? '';
        if (!type.startsWith('application/x-www-form-urlencoded')) return fail(HTTP.badRequest, ctx.version, 'purge', 'query', 'Content-Type must be application/x-www-form-urlencoded');
        const body = await req.body();
        return invalidate(svc, 'purge', urlParam(body.toString('utf8')), ctx, req, undefined, body);
      },
    },
    {
      method: 'GET', path: '/monitoring/fileinfo', name: 'fileinfo', group: 'query',
      handler: async (req, ctx) => {
        requireRunning(ctx);
        let targets;
        try { targets = await svc.targets(urlParam(req.rawQuery)); } catch (err) {
          if (isBadTarget(err)) return fail(HTTP.badRequest, ctx.version, 'fileinfo', 'query', err.message);
          throw err;
        }
        const t = targets[0]!;
        if (t.wildcard) return fail(HTTP.badRequest, ctx.version, 'fileinfo', 'query', 'fileinfo takes one URL, not a pattern');
        const records = await svc.fileinfo(t.vhost, t.prefix);
        if (records.length === 0) {
          return jsonReply(HTTP.notFound, { version: ctx.version, method: 'fileinfo', status: 'NOT_CACHED', result: [], reason: `not cached: ${t.text}` });
        }
        return ok(ctx.version, 'fileinfo', 'query', records);
      },
    },
  ];
}
