// The plain management port on hyper-express. It only adapts requests and replies; access
// control and routing are the Dispatcher's, shared with the TLS port.
import { createRequire } from 'node:module';
import HyperExpress from 'hyper-express';
import { HTTP } from './envelope.js';
import type { Dispatcher } from './router.js';
import { MAX_BODY } from './tls.js';

/**
 * uWebSockets.js silently falls back to a slow pure-JS server when it has no native binary for
 * this Node (DEPENDENCIES.md); the fallback lacks SSLApp, so its absence gives it away.
 */
export function assertNativeUws(): void {
  const uws = createRequire(import.meta.url)('uWebSockets.js') as Record<string, unknown>;
  if (typeof uws.SSLApp !== 'function') {
    throw new Error(`uWebSockets.js has no native build for Node ${process.version} (ABI ${process.versions.modules}); refusing the slow fallback`);
  }
}

export interface PlainServer {
  port: number;
  host: string;
  close(): void;
}

export async function listenPlain(dispatcher: Dispatcher, version: string, host: string, port: number): Promise<PlainServer> {
  // auto_close (default true) makes hyper-express close this server on SIGUSR1, SIGUSR2, SIGINT
  // and SIGTERM: a rolling restart (SIGUSR2) would take the management API away for good. The
  // primary handles every signal itself and closes the API only when it stops.
  const server = new HyperExpress.Server({ max_body_length: MAX_BODY, auto_close: false });
  const handle = async (req: HyperExpress.Request, res: HyperExpress.Response): Promise<void> => {
    // uWS frees the address buffer once the response ends: read it first.
    const remoteAddress = req.ip;
    const reply = await dispatcher.handle({
      method: req.method,
      rawPath: req.path,
      rawQuery: req.path_query,
      headers: req.headers,
      remoteAddress,
      body: () => req.buffer(),
    });
    if (res.completed) return;
    res.status(reply.status);
    for (const [k, v] of Object.entries(reply.headers ?? {})) res.header(k, v);
    res.send(reply.body);
  };
  server.any('/*', handle);
  server.set_not_found_handler(handle);
  // The dispatcher turns handler errors into envelopes; this catches failures of the adapter.
  server.set_error_handler((req, res, err) => {
    if (res.completed) return;
    res.status(HTTP.internalError).json({ version, method: req.path, status: 'fail', result: null, reason: `Internal error: ${err.message}` });
  });
  try {
    await server.listen(port, host);
  } catch (err) {
    throw new Error(`management API cannot listen on ${host}:${port}: ${String(err)}`);
  }
  return { port: server.port, host, close: () => void server.close() };
}
