// The route table and the one dispatch path every request takes, whichever port received it:
// normalise the path, check access, find the route, run it, turn errors into envelopes.
import { AccessControl, permissionFor } from '../access/access.js';
import { ApiError, fail, HTTP, type StatusGroup } from './envelope.js';
import { isCoded } from '../errors/codes.js';
import type { ApiReply, ApiRequest, RouteContext, RouteHandler } from './types.js';

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Exact path, or with `prefix` the start of the path (the remainder is `params.rest`). */
  path: string;
  prefix?: boolean;
  /** The envelope `method`, e.g. `vhostslist` or `/setting/vhosts/create`. */
  name: string;
  group: StatusGroup;
  handler: RouteHandler;
}

/** What a server adapter hands over; the path is still percent-encoded. */
export interface RawRequest extends Omit<ApiRequest, 'path' | 'query' | 'params'> {
  rawPath: string;
}

/** Throws when a route is reachable without a permission: every route must sit under a gate. */
export function assertGated(routes: readonly Route[]): void {
  for (const r of routes) {
    const probe = r.prefix ? `${r.path}x` : r.path;
    if (permissionFor(probe) === undefined) throw new Error(`management route ${r.method} ${r.path} is under no permission gate`);
  }
}

function normalisePath(raw: string): string | undefined {
  let path: string;
  try {
    path = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  if (!path.startsWith('/') || path.includes('\0')) return undefined;
  if (path.split('/').some((seg) => seg === '..' || seg === '.')) return undefined;
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

export class Dispatcher {
  private readonly exact = new Map<string, Route[]>();
  private readonly prefixes: Route[];
  private access: AccessControl | undefined;
  /** Requests the ACL let through and refused (System.ServiceAccess), since the start. */
  readonly managementAccess = { Allow: 0, Deny: 0 };

  constructor(routes: readonly Route[], private readonly ctx: RouteContext) {
    assertGated(routes);
    for (const r of routes.filter((x) => !x.prefix)) this.exact.set(r.path, [...(this.exact.get(r.path) ?? []), r]);
    this.prefixes = routes.filter((x) => x.prefix).sort((a, b) => b.path.length - a.path.length);
  }

  setAccess(access: AccessControl): void {
    this.access = access;
  }

  async handle(raw: RawRequest): Promise<ApiReply> {
    const v = this.ctx.version;
    // A caller on no allowList entry learns nothing, not even that its path is malformed.
    if (this.access?.roleOf(raw.remoteAddress) === undefined) {
      this.managementAccess.Deny++;
      return this.unauthorized(raw.method, normalisePath(raw.rawPath), raw.rawPath);
    }
    const path = normalisePath(raw.rawPath);
    if (path === undefined) return fail(HTTP.badRequest, v, raw.rawPath, 'query', 'Bad Request: malformed path');
    if (!this.access.check(raw.remoteAddress, path).allowed) {
      this.managementAccess.Deny++;
      return this.unauthorized(raw.method, path, path);
    }
    this.managementAccess.Allow++;

    const { route, allowed, rest } = this.find(raw.method, path);
    if (route === undefined) {
      if (allowed.length > 0) {
        const reply = fail(HTTP.methodNotAllowed, v, path, 'query', `Method Not Allowed: use ${allowed.join(', ')}`);
        return { ...reply, headers: { ...reply.headers, allow: allowed.join(', ') } };
      }
      return fail(HTTP.notFound, v, path, 'query', `Not Found: ${path}`);
    }
    const req: ApiRequest = {
      ...raw,
      path,
      query: new URLSearchParams(raw.rawQuery),
      params: rest === undefined ? {} : { rest },
    };
    try {
      return await route.handler(req, this.ctx);
    } catch (err) {
      return errorReply(err, v, route);
    }
  }

  /**
   * 401 in the envelope of the route the path names (its method name and its group's spelling:
   * `Fail` for deploy/backup/restore), or of the query group for a path that names none.
   */
  private unauthorized(method: string, path: string | undefined, shown: string): ApiReply {
    const route = path === undefined ? undefined : this.find(method, path).route;
    return fail(HTTP.unauthorized, this.ctx.version, route?.name ?? shown, route?.group ?? 'query', 'Unauthorized');
  }

  private find(method: string, path: string): { route?: Route; allowed: string[]; rest?: string } {
    const candidates = this.exact.get(path);
    if (candidates !== undefined) {
      return { route: candidates.find((r) => r.method === method), allowed: candidates.map((r) => r.method) };
    }
    const matching = this.prefixes.filter((r) => path.startsWith(r.path));
    if (matching.length === 0) return { allowed: [] };
    const longest = matching[0]!.path;
    const same = matching.filter((r) => r.path === longest);
    return {
      route: same.find((r) => r.method === method),
      allowed: same.map((r) => r.method),
      rest: path.slice(longest.length),
    };
  }
}

function errorReply(err: unknown, version: string, route: Route): ApiReply {
  if (err instanceof ApiError) return fail(err.httpStatus, version, route.name, route.group, err.message);
  if (isCoded(err)) return fail(err.status, version, route.name, route.group, err.message);
  const message = err instanceof Error ? err.message : String(err);
  return fail(HTTP.internalError, version, route.name, route.group, `Internal error: ${message}`);
}
