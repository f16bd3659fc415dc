// A scripted origin on loopback: tests set a handler per path and read what arrived (method,
// URL, headers, body), so every assertion is about what the origin really saw.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  remotePort: number;
}

export type Script = (req: SeenRequest, res: http.ServerResponse) => void;

export class TestOrigin {
  readonly seen: SeenRequest[] = [];
  private readonly scripts = new Map<string, Script>();
  private fallback: Script = (req, res) => {
    const body = `origin:${req.method} ${req.url}`;
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  readonly server: http.Server;
  port = 0;

  constructor() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const seen: SeenRequest = {
          method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks),
          remotePort: req.socket.remotePort ?? 0,
        };
        this.seen.push(seen);
        const path = req.url!.split('?')[0]!;
        (this.scripts.get(path) ?? this.fallback)(seen, res);
      });
    });
  }

  on(path: string, script: Script): this {
    this.scripts.set(path, script);
    return this;
  }

  otherwise(script: Script): this {
    this.fallback = script;
    return this;
  }

  count(path: string): number {
    return this.seen.filter((s) => s.url.split('?')[0] === path).length;
  }

  async start(host = '127.0.0.1', port = 0): Promise<this> {
    await new Promise<void>((r) => this.server.listen(port, host, () => r()));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
