// Raw bytes over a socket, for what a normal HTTP client will not send (malformed lines,
// smuggling attempts, absolute-form, custom methods) and to see exactly what comes back.
import net from 'node:net';

export interface RawResult {
  text: string;
  status: number;
  /** The server closed the connection (as opposed to the test's timeout). */
  closed: boolean;
}

export function rawRequest(port: number, bytes: string | Buffer, opts: { timeoutMs?: number; host?: string } = {}): Promise<RawResult> {
  return new Promise((resolve) => {
    const socket = net.connect(port, opts.host ?? '127.0.0.1', () => socket.write(bytes));
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (closed: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ text, status: m ? Number(m[1]) : 0, closed });
    };
    const timer = setTimeout(() => finish(false), opts.timeoutMs ?? 3000);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
  });
}

export interface RawResponse { status: number; headers: Record<string, string>; body: string }

/**
 * Splits what a connection received into its answers, in order (pipelining tests). Bodies are
 * framed by Content-Length, which every answer of the server and the test origins carries; an
 * incomplete last answer is left out, so a missing answer shows as a shorter list.
 */
export function splitResponses(text: string): RawResponse[] {
  const out: RawResponse[] = [];
  let at = 0;
  for (let guard = 0; guard < 1000 && at < text.length; guard++) {
    const headEnd = text.indexOf('\r\n\r\n', at);
    if (headEnd < 0) break;
    const lines = text.slice(at, headEnd).split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!);
    if (m === null) break;
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? '0');
    const bodyStart = headEnd + 4;
    if (bodyStart + length > text.length) break;
    out.push({ status: Number(m[1]), headers, body: text.slice(bodyStart, bodyStart + length) });
    at = bodyStart + length;
  }
  return out;
}
