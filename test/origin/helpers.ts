// Loopback origins for the origin-client tests: each records the socket (remote port) and what it
// received, so tests assert on what the origin really saw.
import http from 'node:http';
import net from 'node:net';

export interface Seen { method: string; url: string; host: string | undefined; body: string; remotePort: number }

export interface Origin { server: http.Server; port: number; seen: Seen[]; stop(): Promise<void> }

export async function startOrigin(
  handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void = (req, res, body) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'] });
    res.end(`${req.method} ${req.url}${body === '' ? '' : ` ${body}`}`);
  },
  port = 0,
): Promise<Origin> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      seen.push({ method: req.method!, url: req.url!, host: req.headers.host, body, remotePort: req.socket.remotePort ?? 0 });
      handler(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  return {
    server,
    port: (server.address() as net.AddressInfo).port,
    seen,
    stop: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A loopback port that refuses connections: bound, then released. */
export function deadPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls until cond() holds, at most `ms`. */
export async function until(cond: () => boolean, ms = 2000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await sleep(20);
  }
  return cond();
}
