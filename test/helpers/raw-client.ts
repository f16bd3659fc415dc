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
