// `/command` operations of document 1: restart and stop (enableRestart), encryptpassword. The
// primary's ServiceOps carries them out; these handlers only check the call and shape the answer
// (`{status: success|fail, message}`; encryptpassword: the value alone, as text).
import { ApiError, fail, HTTP, ok } from '../envelope.js';
import type { Route } from '../router.js';
import type { ApiRequest } from '../types.js';

export interface ServiceControl {
  /** Resolves once the new processes serve (the old ones then step aside); rejects with the reason. */
  restart(): Promise<void>;
  /** Drains and exits 0, as SIGTERM does, after the answer went out. */
  stop(): Promise<void>;
  /** Installs a version (undefined: the newest) and restarts into it. */
  install(version: string | undefined): Promise<InstallAnswer>;
  /** The `enc:` value of a plain text under the node's license; undefined when no license allows it (with why). */
  encryptPassword(plain: string): { value: string } | { problem: string };
}

/** `status` false: the HTTP status it is refused with. */
export type InstallAnswer = { ok: true; message: string } | { ok: false; httpStatus: number; message: string };

const MESSAGES = {
  restarted: 'restarted: the new processes serve',
  stopping: 'stopping: requests in flight finish, then the node exits',
} as const;

function noParameters(req: ApiRequest): void {
  if ([...req.query.keys()].length > 0) throw new ApiError(HTTP.badRequest, 'this command takes no parameters');
}

export function serviceRoutes(s: ServiceControl): Route[] {
  const restart: Route['handler'] = async (req, ctx) => {
    noParameters(req);
    try {
      await s.restart();
    } catch (err) {
      const reason = (err as Error).message;
      return fail(HTTP.internalError, ctx.version, 'restart', 'operation', reason, { message: `restart failed: ${reason}` });
    }
    return ok(ctx.version, 'restart', 'operation', null, { message: MESSAGES.restarted });
  };
  const stop: Route['handler'] = async (req, ctx) => {
    noParameters(req);
    await s.stop();
    return ok(ctx.version, 'stop', 'operation', null, { message: MESSAGES.stopping });
  };
  const encrypt: Route['handler'] = async (req) => {
    const plain = req.query.getAll('plain');
    if (plain.length !== 1 || plain[0] === '') throw new ApiError(HTTP.badRequest, 'give the plain text once, non-empty: ?plain=<text>');
    const out = s.encryptPassword(plain[0]!);
    if ('problem' in out) throw new ApiError(HTTP.rtNotRunning, `service process not running: ${out.problem}`);
    return { status: HTTP.ok, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: out.value };
  };
  const install: Route['handler'] = async (req, ctx) => {
    noParameters(req);
    const rest = req.params.rest;
    // `/command/install` and `/command/install/` both mean the newest version.
    const version = rest === undefined || rest === '' || rest === '/' ? undefined : rest.replace(/^\//, '');
    if (version?.includes('/') === true) throw new ApiError(HTTP.badRequest, 'one version: /command/install/<version>');
    const a = await s.install(version);
    if (a.ok) return ok(ctx.version, 'install', 'operation', null, { message: a.message });
    return fail(a.httpStatus, ctx.version, 'install', 'operation', a.message, { message: a.message });
  };
  return [
    { method: 'GET', path: '/command/install', name: 'install', group: 'operation', handler: install },
    { method: 'GET', path: '/command/install/', prefix: true, name: 'install', group: 'operation', handler: install },
    { method: 'GET', path: '/command/encryptpassword', name: 'encryptpassword', group: 'query', handler: encrypt },
    { method: 'GET', path: '/command/service/restart', name: 'restart', group: 'operation', handler: restart },
    { method: 'GET', path: '/command/restart', name: 'restart', group: 'operation', handler: restart },
    { method: 'GET', path: '/command/service/stop', name: 'stop', group: 'operation', handler: stop },
    { method: 'GET', path: '/command/stop', name: 'stop', group: 'operation', handler: stop },
  ];
}
