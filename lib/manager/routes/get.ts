// `/get` routes (document 1, alpha): read-only queries over the running setting, its artifact,
// the HTTPS services and discovery. Parsing and evaluation live in lib/query, shared with
// `svc get`; these handlers only turn an outcome into the envelope of the query group.
import { runQuery, type QueryOutcome, type QuerySource } from '../../query/evaluate.js';
import { fail, HTTP, ok } from '../envelope.js';
import type { Route } from '../router.js';
import type { ApiReply, ApiRequest, RouteContext } from '../types.js';

export type { DiscoverEntry, QuerySource } from '../../query/evaluate.js';

function reply(o: QueryOutcome, version: string, name: string): ApiReply {
  if (o.status === 200) return ok(version, name, 'query', o.result);
  // /get/https lists every service with its error also when it fails; other failures carry no result.
  return fail(o.status, version, name, 'query', o.reason ?? 'failed', o.result === null ? {} : { result: o.result });
}

/**
 * `/get/setting...` and `/get/hosting...` are prefix routes because the selectors are part of the
 * path (`/get/setting.hosting[name=a.com].origin`); a path that only begins like them
 * (`/get/settings`) is an unknown path.
 */
function prefixRoute(target: 'setting' | 'hosting', src: QuerySource): Route {
  const path = `/get/${target}`;
  return {
    method: 'GET',
    path,
    prefix: true,
    name: target,
    group: 'query',
    handler: async (req: ApiRequest, ctx: RouteContext) => {
      const rest = req.params.rest ?? '';
      if (rest !== '' && !/^[./[]/.test(rest)) return fail(HTTP.notFound, ctx.version, req.path, 'query', `Not Found: ${req.path}`);
      return reply(await runQuery(`${target}${rest}`, src), ctx.version, target);
    },
  };
}

function exactRoute(target: 'https' | 'discover', src: QuerySource): Route {
  return {
    method: 'GET',
    path: `/get/${target}`,
    name: target,
    group: 'query',
    handler: async (_req, ctx) => reply(await runQuery(target, src), ctx.version, target),
  };
}

export function getRoutes(source: QuerySource): Route[] {
  return [prefixRoute('setting', source), prefixRoute('hosting', source), exactRoute('https', source), exactRoute('discover', source)];
}
