// The line format of the log listener (env.log.meta.port, README "Log listener"): one UDP
// datagram holds one or more lines separated by `\n`, each
//   error <component> <code> <detail ...>   an error event; <code> from the error-code table
//   info <component> <message ...>          an info-log line
// <component> names the sender (no spaces), e.g. `disk-writer/3` (the disk writer thread of
// worker 3). Kept dependency-free: sub-components (a worker thread) import only this file.
import dgram from 'node:dgram';

export type UdpLine =
  | { log: 'error'; component: string; code: string; detail: string }
  | { log: 'info'; component: string; message: string };

export function formatUdpLine(l: UdpLine): string {
  const one = (s: string): string => s.replace(/\s+/g, ' ').trim();
  return l.log === 'error' ? `error ${l.component} ${l.code} ${one(l.detail)}` : `info ${l.component} ${one(l.message)}`;
}

/** A line back to its parts; undefined when it is not in the format. */
export function parseUdpLine(text: string): UdpLine | undefined {
  const m = /^(error|info) (\S+) (.+)$/.exec(text.trim());
  if (m === null) return undefined;
  if (m[1] === 'info') return { log: 'info', component: m[2]!, message: m[3]! };
  const e = /^(\d{4}) ?(.*)$/.exec(m[3]!);
  return e === null ? undefined : { log: 'error', component: m[2]!, code: e[1]!, detail: e[2]! };
}

/** A sender of lines to the listener on 127.0.0.1:port (fire and forget; never throws). */
export function udpLogSender(port: number): (l: UdpLine) => void {
  const socket = dgram.createSocket('udp4');
  socket.on('error', () => undefined);
  socket.unref();
  return (l) => {
    try {
      socket.send(formatUdpLine(l), port, '127.0.0.1');
    } catch {
      // The socket is closing with its thread: the line has nowhere to go.
    }
  };
}
