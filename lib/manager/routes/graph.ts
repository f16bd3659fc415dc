// `/graph/<resource>_<type>.png` and `/graph/vhost/<resource>_<type>.png?vhost=<name>` (document
// 1, gated by enableGraph): a PNG, or a failure envelope carrying the error's code (README,
// "Graphs"; lib/errors/codes.ts).
import { codedError, isCoded } from '../../errors/codes.js';
import { fail } from '../envelope.js';
import type { Route } from '../router.js';
import type { ApiReply, ApiRequest, RouteContext } from '../types.js';
import type { GraphService } from '../../graph/service.js';

export function graphRoutes(graphs: GraphService): Route[] {
  const answer = (vhost: boolean) => async (req: ApiRequest, ctx: RouteContext): Promise<ApiReply> => {
    const rest = req.params.rest ?? '';
    try {
      if (!rest.endsWith('.png') || rest.includes('/')) throw codedError('GRAPH_NOT_FOUND', rest, `the path is ${vhost ? '/graph/vhost/' : '/graph/'}<resource>_<type>.png`);
      const host = req.query.get('vhost') ?? undefined;
      if (host !== undefined && !vhost) throw codedError('GRAPH_BAD_QUERY', 'vhost= applies to /graph/vhost/ graphs only');
      if (host === '') throw codedError('GRAPH_BAD_QUERY', 'vhost= is empty: name a virtual host, or leave it out for the sum of all hosts');
      const png = await graphs.png(vhost, rest.slice(0, -'.png'.length), host);
      // A graph changes with every step: a browser or proxy asks again rather than reuse it.
      return { status: 200, headers: { 'content-type': 'image/png', 'cache-control': 'no-cache' }, body: png };
    } catch (err) {
      if (!isCoded(err)) throw err;
      return fail(err.status, ctx.version, 'graph', 'query', err.message, { code: err.code });
    }
  };
  return [
    { method: 'GET', path: '/graph/', prefix: true, name: 'graph', group: 'query', handler: answer(false) },
    { method: 'GET', path: '/graph/vhost/', prefix: true, name: 'graph', group: 'query', handler: answer(true) },
  ];
}
