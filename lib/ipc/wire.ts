// Forms of values that cross the primary <-> worker IPC and do not survive structured cloning
// as they are.
import type { Target } from '../cache/commands/targets.js';

/** A target as it crosses IPC (a RegExp does not survive structured cloning). */
export interface WireTarget { vhost: string; prefix: string; wildcard: boolean; pattern?: string; flags?: string; text: string; tag?: string }

export function toWire(t: Target): WireTarget {
  return { vhost: t.vhost, prefix: t.prefix, wildcard: t.wildcard, pattern: t.match?.source, flags: t.match?.flags, text: t.text, ...(t.tag === undefined ? {} : { tag: t.tag }) };
}

export function fromWire(w: WireTarget): Target {
  return { vhost: w.vhost, prefix: w.prefix, wildcard: w.wildcard, match: w.pattern === undefined ? undefined : new RegExp(w.pattern, w.flags), text: w.text, ...(w.tag === undefined ? {} : { tag: w.tag }) };
}
