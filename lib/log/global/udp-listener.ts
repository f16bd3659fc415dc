// The log listener of env.log.meta.port (document 3, default 8514): the primary takes log lines
// from the node's sub-components over UDP (format: ./udp-line.ts). It listens on 127.0.0.1 only:
// the senders are processes of this node, and a port open to the network would let anyone write
// into the logs. A port it cannot bind does not stop the node (serving does not depend on it):
// the error log says so (4002).
import dgram from 'node:dgram';
import type { ErrorEvent } from './error-codes.js';
import { ERRORS, type ErrorCodeId } from './error-codes.js';
import { parseUdpLine } from './udp-line.js';

const REPORT_EVERY_MS = 60_000;

export interface UdpLogSinks {
  error(e: ErrorEvent): void;
  info(message: string, fields: Record<string, unknown>): void;
}

export class UdpLogListener {
  private socket: dgram.Socket | undefined;
  private lastBadReport = -Infinity;

  constructor(private readonly sinks: UdpLogSinks) {}

  /** Resolves to the bound port, or undefined when it could not listen (reported). */
  async start(port: number): Promise<number | undefined> {
    const socket = dgram.createSocket('udp4');
    socket.on('message', (msg, from) => this.receive(msg.toString('utf8'), `${from.address}:${from.port}`));
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('error', reject);
        socket.bind(port, '127.0.0.1', () => { socket.off('error', reject); resolve(); });
      });
    } catch (err) {
      socket.close();
      this.sinks.error({ code: '4002', detail: `127.0.0.1:${port} udp: ${(err as Error).message}` });
      return undefined;
    }
    socket.on('error', (err) => this.sinks.error({ code: '4002', detail: err.message }));
    this.socket = socket;
    return socket.address().port;
  }

  private receive(text: string, from: string): void {
    for (const raw of text.split('\n')) {
      if (raw.trim() === '') continue;
      const l = parseUdpLine(raw);
      if (l?.log === 'info') this.sinks.info(l.message, { component: l.component });
      else if (l?.log === 'error' && l.code in ERRORS) this.sinks.error({ code: l.code as ErrorCodeId, detail: `${l.component}: ${l.detail}` });
      else this.bad(raw, from);
    }
  }

  /** A line not in the format: once a minute at most, so a noisy sender cannot flood the log. */
  private bad(raw: string, from: string): void {
    const now = Date.now();
    if (now - this.lastBadReport < REPORT_EVERY_MS) return;
    this.lastBadReport = now;
    this.sinks.error({ code: '4003', detail: `from ${from}: ${raw.slice(0, 200)}` });
  }

  close(): void {
    this.socket?.close();
    this.socket = undefined;
  }
}
