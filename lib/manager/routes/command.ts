// `/command` routes. The invalidation family (purge, expire, ...) and the operations (install,
// restart, stop) are added here by later work; resetorigin needs only the RT bridge.
import { ok } from '../envelope.js';
import type { Route } from '../router.js';
import { optionalVhost, requireRunning } from './rt.js';

export const commandRoutes: Route[] = [
  {
    method: 'GET',
    path: '/command/resetorigin',
    name: 'resetorigin',
    group: 'query',
    handler: async (req, ctx) => {
      requireRunning(ctx);
      const vhost = optionalVhost(req, ctx);
      await ctx.rt.resetOrigin(vhost);
      return ok(ctx.version, 'resetorigin', 'query', vhost === undefined ? ctx.rt.vhosts() : [vhost]);
    },
  },
];
