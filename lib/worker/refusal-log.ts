// Where the worker sends the requests its HTTP parser refused (client-errors.ts): into the access
// log of the host the request's Host names on the listener it came in on, else of that listener's
// default host (VhostTable.hostOfListen), as nginx logs a 400 in its default server's log. Its
// own module so the worker's wiring stays one line.
import type { HostLogWriter } from '../log/host-logs.js';
import { hostName, parseHead } from '../log/access/refused.js';
import { connectionOf } from '../pipeline/parts/transaction.js';
import type { HostRuntime } from '../pipeline/parts/host-runtime.js';
import type { VhostTable } from '../routing/vhost-table.js';
import { setRefusalSink, type Refusal } from './client-errors.js';

/** Logs every refusal through `writer` while attached; returns the detach. */
export function logRefusals(writer: HostLogWriter, table: () => VhostTable<HostRuntime> | undefined): () => void {
  setRefusalSink((r: Refusal) => {
    const t = table();
    if (t === undefined) return;
    const connection = connectionOf(r.socket);
    const headers = r.req?.headers ?? (r.head === undefined ? {} : parseHead(r.head).headers);
    const host = t.hostOfListen(hostName(headers), connection.serverPort, connection.serverAddress);
    writer.refused({ connection, status: r.status, answer: r.answer, head: r.head, req: r.req, at: Date.now() }, host);
  });
  return () => setRefusalSink(undefined);
}
