// `/command` invalidation family (purge, expire, expireafter, hardpurge, POST purge) and
// `/monitoring/fileinfo` (document 1). Beside `url`, the family takes `tag` (repeatable, with
// an optional `vhost`): every object the origin tagged so (lib/cache/tags.ts).
import { isBadTarget, type Target } from '../../cache/commands/targets.js';
import { codedError } from '../../errors/codes.js';
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

/**
 * The `tag` parameters (repeatable) and `vhost` of a call, from the part of the query before
 * `url=` (url takes the rest, as for `sec`).
 */
function tagParams(query: string | undefined): { tags: string[]; vhost: string | undefined } {
  const rawQuery = query ?? '';
  const before = rawQuery.startsWith('url=') ? '' : rawQuery.split('&url=')[0] ?? '';
  const tags: string[] = [];
  let vhost: string | undefined;
  for (const part of before.split('&')) {
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq);
    if (name !== 'tag' && name !== 'vhost') continue;
    const raw = eq < 0 ? '' : part.slice(eq + 1);
    let value: string;
    try { value = decodeURIComponent(raw.replace(/\+/g, ' ')); } catch { value = raw; }
    if (name === 'tag') tags.push(value);
    else vhost = value;
  }
  return { tags, vhost };
}

/**
 * The targets of a call: those `url` names and those its `tag` parameters name (each tag on the
 * host `vhost` names, else on every host); rejects with a BAD_TARGET or TARGET_UNKNOWN_HOST coded error.
 */
export async function callTargets(svc: InvalidationCommands, query: string | undefined, url: string | null): Promise<{ targets: Target[]; text: string }> {
  const { tags, vhost } = tagParams(query);
  if (tags.length === 0) {
    if (vhost !== undefined) throw codedError('BAD_TARGET', 'vhost scopes tag: a call with vhost needs tag');
    return { targets: await svc.targets(url), text: url ?? '' };
  }
  const byUrl = url === null ? [] : await svc.targets(url);
  const byTag = svc.tagTargets(tags, vhost === '' ? undefined : vhost);
  const text = [url, ...tags.map((t) => `tag:${t}`)].filter((t) => t !== null).join('|');
  return { targets: [...byUrl, ...byTag], text };
}

function secParam(query: string | undefined): number | 'bad' {
  const rawQuery = query ?? '';
  const before = rawQuery.split(/(^|&)url=/)[0] ?? '';
  const m = /(?:^|&)sec=([^&]*)/.exec(before);
  if (m === null) return 86400;
  const n = Number(m[1]);
  return Number.isInteger(n) && n > 0 ? n : 'bad';
}

async function invalidate(svc: InvalidationCommands, kind: InvalidateKind, query: string | undefined, ctx: RouteContext, req: ApiRequest,
  sec?: number, body?: Buffer): Promise<ApiReply> {
  requireRunning(ctx);
  let targets;
  let url;
  try {
    ({ targets, text: url } = await callTargets(svc, query, urlParam(query)));
  } catch (err) {
    // An unknown virtual host in the URL is 502 for the purge family (README): the code's status.
    if (isBadTarget(err)) return fail(err.status, ctx.version, kind, 'query', err.message);
    throw err;
  }
  svc.recognized?.({ kind, async: false, url, targets, sec, request: { method: req.method, path: req.path, rawQuery: req.rawQuery, headers: req.headers, body } });
  const outcome = await svc.run(kind, targets, sec);
  const reply = ok(ctx.version, kind, 'query', outcome.result);
  return { ...reply, status: outcome.status };
}

/** Why a POST of targets is refused (a declared length and a form body are required), if it is. */
export function formRefusal(req: ApiRequest): string | undefined {
  if (req.headers['content-length'] === undefined) return 'Content-Length required';
  const type = req.headers['content-type'] ?? '';
  return type.startsWith('application/x-www-form-urlencoded') ? undefined : 'Content-Type must be application/x-www-form-urlencoded';
}

export function invalidationRoutes(svc: InvalidationCommands): Route[] {
  const simple = (kind: InvalidateKind): Route => ({
    method: 'GET', path: `/command/${kind}`, name: kind, group: 'query',
    handler: (req: ApiRequest, ctx) => invalidate(svc, kind, req.rawQuery, ctx, req),
  });
  return [
    simple('purge'), simple('expire'), simple('hardpurge'),
    {
      method: 'GET', path: '/command/expireafter', name: 'expireafter', group: 'query',
      handler: (req, ctx) => {
        const sec = secParam(req.rawQuery);
        if (sec === 'bad') return Promise.resolve(fail(HTTP.badRequest, ctx.version, 'expireafter', 'query', 'sec must be a positive integer'));
        return invalidate(svc, 'expireafter', req.rawQuery, ctx, req, sec);
      },
    },
    {
      method: 'POST', path: '/command/purge', name: 'purge', group: 'query',
      handler: async (req, ctx) => {
        const refused = formRefusal(req);
        if (refused !== undefined) return fail(HTTP.badRequest, ctx.version, 'purge', 'query', refused);
        const body = await req.body();
        return invalidate(svc, 'purge', body.toString('utf8'), ctx, req, undefined, body);
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
