// Shared setup of the black-box cache tests: one scripted origin, the real server with one host
// in front of it, and a client that reads status, fields and body (and how long it took).
import type { IncomingHttpHeaders } from 'node:http';
import t from 'tap';
import { Agent, request, type Dispatcher } from 'undici';
import { TestOrigin } from '../../helpers/origin.js';
import { freePort } from '../../helpers/ports.js';
import { startServer, type RunningServer, type StartOptions } from '../../helpers/server.js';

export const HOST = 'cache.test';

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  raw: Buffer;
  ms: number;
}

export interface CacheBench {
  origin: TestOrigin;
  server: RunningServer;
  port: number;
  get(path: string, headers?: Record<string, string>, opts?: { method?: Dispatcher.HttpMethod; body?: string; fresh?: boolean }): Promise<Answer>;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Starts an origin and the server for this test file; both stop at the file's teardown. */
export async function cacheBench(opts: StartOptions = {}): Promise<CacheBench> {
  const origin = await new TestOrigin().start();
  const port = await freePort();
  const server = await startServer([{ name: HOST, listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }], opts);
  t.teardown(async () => {
    if (process.env.SHOW_LOGS) console.error(server.logs.join('\n'));
    await server.stop();
    await origin.stop();
  });
  const get: CacheBench['get'] = async (path, headers = {}, o = {}) => {
    const started = Date.now();
    const dispatcher = o.fresh ? new Agent({ pipelining: 0, keepAliveTimeout: 1 }) : undefined;
    try {
      const r = await request(`http://127.0.0.1:${port}${path}`, {
        method: o.method ?? 'GET', headers: { host: HOST, ...headers }, body: o.body, dispatcher,
        headersTimeout: 10000, bodyTimeout: 10000,
      });
      const raw = Buffer.from(await r.body.arrayBuffer());
      return { status: r.statusCode, headers: r.headers, body: raw.toString(), raw, ms: Date.now() - started };
    } finally {
      if (dispatcher) await dispatcher.close();
    }
  };
  return { origin, server, port, get };
}

/** An origin answer with a fixed body and the given fields (Content-Length added). */
export function reply(status: number, headers: Record<string, string | string[]>, body: string) {
  return (_q: unknown, res: import('node:http').ServerResponse): void => {
    res.writeHead(status, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body), ...headers });
    res.end(body);
  };
}
