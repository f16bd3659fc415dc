// Checks shared by the handlers that reach the RT workers, so that every one of them answers
// "RT not running" and "virtual host not found" with the same codes and words (lib/errors/codes.ts,
// as the primary's RtBridge and the workers throw them).
import { codedError } from '../../errors/codes.js';
import { ApiError, HTTP } from '../envelope.js';
import type { ApiRequest, RouteContext } from '../types.js';

export function requireRunning(ctx: RouteContext): void {
  if (!ctx.rt.running()) throw codedError('RT_NOT_RUNNING');
}

/**
 * The optional `vhost` parameter: undefined when absent (all hosts), else a host that exists.
 * An empty value is a mistake of the caller, not "all hosts".
 */
export function optionalVhost(req: ApiRequest, ctx: RouteContext): string | undefined {
  const vhost = req.query.get('vhost');
  if (vhost === null) return undefined;
  if (vhost === '') throw new ApiError(HTTP.badRequest, 'vhost parameter is empty');
  if (!ctx.rt.vhosts().includes(vhost)) throw codedError('VHOST_NOT_FOUND', vhost);
  return vhost;
}
