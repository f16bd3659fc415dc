// The JSON envelope of document 1 and the `status` spelling of each group. Document 1 spells
// success and failure differently per group; keeping every spelling here means a handler names
// its group and never writes a status string itself.
import type { ApiReply } from './types.js';

export const STATUS = {
  /** deploy, backup, restore */
  deploy: { ok: 'OK', fail: 'Fail' },
  /** upload, validate, virtual-host operations */
  upload: { ok: 'OK', fail: 'fail' },
  /** install, restart, stop */
  operation: { ok: 'success', fail: 'fail' },
  /**
   * Queries (/monitoring, /get) and invalidation (/command purge family, resetorigin). Document 1
   * shows only `OK` for them; their failures are spelled `fail` like the other lower-case groups.
   */
  query: { ok: 'OK', fail: 'fail' },
} as const;

export type StatusGroup = keyof typeof STATUS;

/**
 * Numeric codes where document 1 names only the meaning (the /command, /get, /monitoring and
 * /graph tables). Decided for this server and stated in README.
 */
export const HTTP = {
  ok: 200,
  badRequest: 400,
  unauthorized: 401,
  notFound: 404,
  methodNotAllowed: 405,
  /** Another install is under way. */
  conflict: 409,
  /** A body over the API's limit (node-server.ts MAX_BODY). */
  payloadTooLarge: 413,
  internalError: 500,
  rtNotRunning: 503,
} as const;

interface Envelope {
  version: string;
  method: string;
  status: string;
  result: unknown;
  reason: string | null;
  [extra: string]: unknown;
}

export function jsonReply(status: number, body: unknown, headers: Record<string, string> = {}): ApiReply {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers }, body: JSON.stringify(body) };
}

/** A success envelope. `extra` holds members document 1 shows at the top level (`{origin: [...]}`). */
export function ok(version: string, method: string, group: StatusGroup, result: unknown, extra: Record<string, unknown> = {}): ApiReply {
  const body: Envelope = { version, method, status: STATUS[group].ok, result, reason: null, ...extra };
  return jsonReply(HTTP.ok, body);
}

/** A failure envelope with the HTTP status that carries it. */
export function fail(
  httpStatus: number,
  version: string,
  method: string,
  group: StatusGroup,
  reason: string,
  extra: Record<string, unknown> = {},
): ApiReply {
  const body: Envelope = { version, method, status: STATUS[group].fail, result: null, reason, ...extra };
  return jsonReply(httpStatus, body);
}

/**
 * Thrown inside a handler to answer with a failure envelope of the handler's method and group.
 * Not a code of lib/errors/codes.ts: it carries the status document 1 gives that route for that
 * cause and the route's own reason (a bad parameter, a missing GeoIP directory); a failure with a
 * code of its own (RT_NOT_RUNNING, VHOST_NOT_FOUND, ...) is thrown from that table instead.
 */
export class ApiError extends Error {
  constructor(readonly httpStatus: number, reason: string) {
    super(reason);
    this.name = 'ApiError';
  }
}
