// The listening sockets of the node, held by the long-lived supervisor so that they outlive any
// primary: each worker of any primary generation gets a duplicate of the same socket (the
// kernel hands each connection to one of the processes accepting on it), so replacing every
// process never closes a port. A socket is closed when no worker of any generation uses it any
// more (a port dropped from the setting then refuses connections instead of queueing them).
//
// The broker binds but never listens or accepts itself: the first worker's listen() puts the
// socket into the listening state, as node:cluster's SCHED_NONE does with its shared handles.
import dns from 'node:dns/promises';
import net from 'node:net';
import { getSystemErrorName } from 'node:util';

/** A bound TCP handle as node's internals make it (net._createServerHandle, used by node:cluster too). */
export interface TcpHandle { close(cb?: () => void): void; getsockname(out: object): number }

type CreateServerHandle = (address: string | null, port: number, addressType: number, fd?: number, flags?: number) => TcpHandle | number;
const createServerHandle = (net as unknown as { _createServerHandle: CreateServerHandle })._createServerHandle;

export function listenKey(host: string | null, port: number): string {
  return `${host ?? '*'}:${port}`;
}

interface Held { handle: TcpHandle; owners: Set<string> }

export class ListenBroker {
  private readonly held = new Map<string, Held>();

  /** The socket of host:port for `owner` (bound now if no one holds it); throws with the errno name. */
  async acquire(owner: string, host: string | null, port: number): Promise<TcpHandle> {
    const key = listenKey(host, port);
    let h = this.held.get(key);
    if (h === undefined) {
      let address: string | null = null;
      let family = 4;
      if (host !== null) {
        const found = net.isIP(host) !== 0 ? { address: host, family: net.isIP(host) } : await dns.lookup(host);
        address = found.address;
        family = found.family;
      }
      // Another acquire of the same key may have bound it while the name was resolved.
      h = this.held.get(key);
      if (h === undefined) {
        const made = createServerHandle(address, port, family);
        if (typeof made === 'number') throw bindError(made, key);
        // libuv defers a bind's EADDRINUSE to listen() (uv_tcp_bind returns 0), and the broker
        // never listens: the handle comes back unbound. Its duplicate carries no such error, so
        // a worker's listen() on it would bind an ephemeral port on every address and report
        // success. getsockname gives the deferred error back.
        const bound = made.getsockname({});
        if (bound !== 0) {
          made.close();
          throw bindError(bound, key);
        }
        h = { handle: made, owners: new Set() };
        this.held.set(key, h);
      }
    }
    h.owners.add(owner);
    return h.handle;
  }

  release(owner: string, key: string): void {
    const h = this.held.get(key);
    if (h === undefined) return;
    h.owners.delete(owner);
    if (h.owners.size === 0) {
      this.held.delete(key);
      h.handle.close();
    }
  }

  /** Every socket of the owners whose id starts with `prefix` (a process that exited). */
  releaseAll(prefix: string): void {
    for (const [key, h] of [...this.held]) for (const o of [...h.owners]) if (o.startsWith(prefix)) this.release(o, key);
  }
}

function bindError(errno: number, key: string): NodeJS.ErrnoException {
  const code = getSystemErrorName(errno);
  const err = new Error(`listen ${code}: ${key}`) as NodeJS.ErrnoException;
  err.code = code;
  return err;
}
