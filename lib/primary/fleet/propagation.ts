// events.onPurgeRequest.propagation (document 2): an invalidation call this node recognised is
// forwarded once to each node of the nodelist but itself, before it runs here, without waiting
// for the answers (best effort: a timeout, and a line in the info log when a peer fails). The
// forwarded call carries PROPAGATED_HEADER, so the receiver runs it without forwarding it again.
import http from 'node:http';
import { connectionListed, isHopByHop } from '../../http/hop-by-hop.js';
import { parseMember } from '../../setting/schema/formats.js';
import type { Setting } from '../../setting/types.js';

export const PROPAGATED_HEADER = 'x-svc-propagated';
/** How long a forwarded call may take before it is given up (and logged). */
const PROPAGATION_TIMEOUT_MS = 5000;

/** A call to forward as it was received: a management command, or a PURGE on a service port. */
export interface ForwardedCall {
  method: string;
  /** Path with its query string, as sent. */
  target: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** PURGE method: the service port it arrived on (peers serve the same ports). Else the management port. */
  servicePort?: number;
}

export interface PropagationDeps {
  setting(): Setting;
  /** This node's addresses (interfaces, bound sockets). */
  own(): Set<string>;
  /** A line in the info log. */
  info(message: string, fields: Record<string, unknown>): void;
  timeoutMs?: number;
}

export class Propagation {
  constructor(private readonly deps: PropagationDeps) {}

  /**
   * Forwards `call` to every peer of the nodelist; returns the `ip:port` addresses it was sent
   * to. A call that is itself a propagated one, or a node without propagation, forwards nothing.
   */
  forward(call: ForwardedCall): string[] {
    const s = this.deps.setting();
    const p = s.env.management.server.events.onPurgeRequest.propagation;
    if (!p.enable || p.nodelist.length === 0 || call.headers[PROPAGATED_HEADER] !== undefined) return [];
    const own = this.deps.own();
    const apiPort = s.env.management.api.port;
    const sent: string[] = [];
    const seen = new Set<string>();
    for (const entry of p.nodelist) {
      const m = parseMember(entry);
      if (m === undefined) continue; // refused at validation (fleet-check.ts)
      const port = call.servicePort ?? m.port ?? apiPort;
      // The node's own IP is never a peer, whatever port the entry names ("including itself").
      if (own.has(m.ip)) continue;
      const key = `${m.ip.includes(':') ? `[${m.ip}]` : m.ip}:${port}`;
      if (seen.has(key)) continue;
      seen.add(key);
      this.send(m.ip, port, key, call);
      sent.push(key);
    }
    return sent;
  }

  private send(ip: string, port: number, key: string, call: ForwardedCall): void {
    const headers: Record<string, string> = {};
    // Not forwarded: hop-by-hop fields, those Connection names, and Content-Length (set below).
    const listed = connectionListed(call.headers.connection);
    for (const [k, v] of Object.entries(call.headers)) if (!isHopByHop(k) && k !== 'content-length' && listed?.has(k) !== true) headers[k] = v;
    headers[PROPAGATED_HEADER] = '1';
    headers.connection = 'close';
    if (call.body !== undefined) headers['content-length'] = String(call.body.length);
    const fail = (why: string): void => this.deps.info('invalidation propagation failed', { peer: key, method: call.method, target: call.target, reason: why });
    const req = http.request({ host: ip, port, method: call.method, path: call.target, headers, timeout: this.deps.timeoutMs ?? PROPAGATION_TIMEOUT_MS, agent: false });
    req.once('response', (res) => {
      res.resume();
      // 2xx, and the "nothing to invalidate" answers (404 / resCodeNoCtrlTarget), are delivered.
      if (res.statusCode !== undefined && res.statusCode >= 500) fail(`answered ${res.statusCode}`);
      else if (res.statusCode === 401 || res.statusCode === 403) fail(`answered ${res.statusCode}: this node is not allowed there`);
    });
    req.once('timeout', () => req.destroy(new Error(`no answer within ${this.deps.timeoutMs ?? PROPAGATION_TIMEOUT_MS} ms`)));
    req.once('error', (err) => fail(err.message));
    req.end(call.body);
  }
}
