// The plain management port (env.management.api.port) on node:http, with the TLS port's
// request listener (node-server.ts).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { apiListener } from './node-server.js';
import type { Dispatcher } from './router.js';

export interface PlainServer {
  port: number;
  host: string;
  close(): Promise<void>;
}

export async function listenPlain(dispatcher: Dispatcher, version: string, host: string, port: number): Promise<PlainServer> {
  const server = http.createServer(apiListener(dispatcher, version));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(new Error(`management API cannot listen on ${host}:${port} (env.management.api.port): ${err.message}`));
    });
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    host,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
