// Hash balance: the worker that caches a URL (its ring owner, or the balance script's choice).
import type { RuntimeState } from '../pipeline/parts/runtime-state.js';

/** The owner of `url` of host `vhost`; `self` in round-robin balance or when no owner is known. */
export function ownerOf(b: RuntimeState['balance'] | undefined, self: number, vhost: string, url: string): number {
  if (b === undefined || b.mode !== 'hash') return self;
  const key = b.hashKey(vhost, url);
  const point = b.luaHash === undefined ? -1 : b.luaHash(key);
  // A script that fails on a key leaves it to the built-in hash rather than fail the client.
  const owner = point >= 0 ? b.ring.ownerOfHash(point) : b.ring.owner(key);
  return owner < 0 ? self : owner;
}
