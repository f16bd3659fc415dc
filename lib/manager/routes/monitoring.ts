// `/monitoring` routes that need no cache: host list, origin status, hardware, cipher
// expansion, GeoIP databases. fileinfo, asynctrl, realtime and average come with the cache and
// statistics work.
import { ApiError, HTTP, ok } from '../envelope.js';
import { geoipList } from '../monitoring/geoip.js';
import { hwInfo } from '../monitoring/hwinfo.js';
import { expandCiphers } from '../monitoring/ssl.js';
import type { Route } from '../router.js';
import { optionalVhost, requireRunning } from './rt.js';

export const monitoringRoutes: Route[] = [
  {
    method: 'GET',
    path: '/monitoring/vhostslist',
    name: 'vhostslist',
    group: 'query',
    handler: async (_req, ctx) => ok(ctx.version, 'vhostslist', 'query', ctx.rt.vhosts()),
  },
  {
    method: 'GET',
    path: '/monitoring/origin',
    name: 'origin',
    group: 'query',
    // Document 1 names the result `{origin: [...]}` ("Origin status (/monitoring/origin result)").
    handler: async (req, ctx) => {
      requireRunning(ctx);
      const vhost = optionalVhost(req, ctx);
      return ok(ctx.version, 'origin', 'query', { origin: await ctx.rt.originStatus(vhost) });
    },
  },
  {
    method: 'GET',
    path: '/monitoring/hwinfo',
    name: 'hwinfo',
    group: 'query',
    handler: async (_req, ctx) => ok(ctx.version, 'hwinfo', 'query', await hwInfo(ctx.version)),
  },
  {
    method: 'GET',
    path: '/monitoring/ssl',
    name: 'ssl',
    group: 'query',
    // Document 1 does not name the parameter: `ciphersuite`, or `cs` for short.
    handler: async (req, ctx) => {
      const expr = req.query.get('ciphersuite') ?? req.query.get('cs');
      if (expr === null || expr === '') throw new ApiError(HTTP.badRequest, 'ciphersuite parameter is required');
      // Document 1's third result: the suites are those the RT's TLS ports would take.
      requireRunning(ctx);
      return ok(ctx.version, 'ssl', 'query', await expandCiphers(expr));
    },
  },
  {
    method: 'GET',
    path: '/monitoring/geoiplist',
    name: 'geoiplist',
    group: 'query',
    handler: async (_req, ctx) => ok(ctx.version, 'geoiplist', 'query', await geoipList(ctx.setting())),
  },
];
