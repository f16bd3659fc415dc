// `/command/async/*` and `/monitoring/asynctrl/actives` (document 1).
import { isBadTarget } from '../../cache/commands/targets.js';
import { codedError } from '../../errors/codes.js';
import type { InvalidateKind } from '../../cache/commands/invalidate.js';
import { fail, HTTP, ok } from '../envelope.js';
import type { Route } from '../router.js';
import type { ApiReply, ApiRequest, AsyncInvalidations, InvalidationCommands, RouteContext } from '../types.js';
import { requireRunning } from './rt.js';
import { callTargets, formRefusal, urlParam } from './invalidation.js';

/** Queues `kind` for the targets of `query` (a GET's query or a POST's form body). */
async function queueCall(queue: AsyncInvalidations, svc: InvalidationCommands, kind: InvalidateKind, query: string | undefined,
  req: ApiRequest, ctx: RouteContext, body?: Buffer): Promise<ApiReply> {
  requireRunning(ctx);
  let targets;
  let url;
  try { ({ targets, text: url } = await callTargets(svc, query, urlParam(query))); } catch (err) {
    if (isBadTarget(err)) return fail(err.status, ctx.version, kind, 'query', err.message);
    throw err;
  }
  svc.recognized?.({ kind, async: true, url, targets, request: { method: req.method, path: req.path, rawQuery: req.rawQuery, headers: req.headers, body } });
  if (!await queue.add(kind, url, targets)) return fail(503, ctx.version, kind, 'query', `asynchronous queue full (${queue.max})`);
  return ok(ctx.version, kind, 'query', { queued: true, queue: { used: queue.used, max: queue.max } });
}

export function asyncRoutes(queue: AsyncInvalidations, svc: InvalidationCommands): Route[] {
  const enqueue = (kind: InvalidateKind): Route => ({
    method: 'GET', path: `/command/async/${kind}`, name: kind, group: 'query',
    handler: (req, ctx) => queueCall(queue, svc, kind, req.rawQuery, req, ctx),
  });
  // A form body as POST /command/purge takes: a list of targets longer than a request line may be.
  const enqueueForm = (kind: InvalidateKind): Route => ({
    method: 'POST', path: `/command/async/${kind}`, name: kind, group: 'query',
    handler: async (req, ctx) => {
      const refused = formRefusal(req);
      if (refused !== undefined) return fail(HTTP.badRequest, ctx.version, kind, 'query', refused);
      const body = await req.body();
      return queueCall(queue, svc, kind, body.toString('utf8'), req, ctx, body);
    },
  });
  return [
    enqueue('purge'), enqueue('expire'), enqueue('hardpurge'),
    enqueueForm('purge'), enqueueForm('expire'), enqueueForm('hardpurge'),
    {
      method: 'GET', path: '/command/async/asynctrl/reset', name: 'asynctrl/reset', group: 'query',
      handler: async (_req, ctx) => ok(ctx.version, 'asynctrl/reset', 'query', { cleared: await queue.reset() }),
    },
    {
      method: 'GET', path: '/command/async/asynctrl/prectrl/reset', name: 'asynctrl/prectrl/reset', group: 'query',
      handler: async (req, ctx) => {
        const vhost = req.query.get('vhost');
        if (vhost === null || vhost === '') return fail(HTTP.badRequest, ctx.version, 'asynctrl/prectrl/reset', 'query', 'vhost is required');
        if (!ctx.rt.vhosts().includes(vhost)) throw codedError('VHOST_NOT_FOUND', vhost);
        await queue.resetPrectrl(vhost);
        return ok(ctx.version, 'asynctrl/prectrl/reset', 'query', vhost);
      },
    },
    {
      method: 'GET', path: '/monitoring/asynctrl/actives', name: 'asynctrl/actives', group: 'query',
      handler: async (req, ctx) => {
        const wanted = req.query.get('vhosts');
        const detail = req.query.get('detail') === 'true';
        const known = ctx.rt.vhosts();
        // Only hosts that exist: a name that serves nothing has no queue to show.
        const names = wanted === null || wanted === '' ? known : wanted.split(',').map((n) => n.trim()).filter((n) => known.includes(n));
        const vhosts = names.map((name) => {
          const list = queue.listFor(name);
          return { name, prectrl: { enable: queue.prectrlEnabled(name), used: list.length, max: queue.max, ...(detail ? { list } : {}) } };
        });
        return ok(ctx.version, 'asynctrl/actives', 'query', { queue: { used: queue.used, max: queue.max }, prectrl: { firstonly: false, max: queue.max }, vhosts });
      },
    },
  ];
}
