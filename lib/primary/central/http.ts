// The outbound HTTP calls of central management: each with its timeout (the whole transaction)
// and one line in the info log, whatever the outcome. They run in the primary only.
import { request } from 'undici';

export type InfoLog = (message: string, fields: Record<string, unknown>) => void;

interface CallResult { status: number; headers: Record<string, string>; body: Buffer }

interface Call {
  method: 'GET' | 'POST' | 'PUT';
  url: string;
  timeoutMs: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** What the call is for, in its log line (feed, feedback, heartbeat ...). */
  purpose: string;
}

/** Bodies larger than this are refused (a setting package or a feed message is far smaller). */
const MAX_BODY = 64 * 1024 * 1024;

export async function call(c: Call, log: InfoLog): Promise<CallResult> {
  const started = Date.now();
  try {
    const r = await request(c.url, {
      method: c.method,
      headers: c.headers ?? {},
      body: c.body ?? null,
      headersTimeout: c.timeoutMs,
      bodyTimeout: c.timeoutMs,
      signal: AbortSignal.timeout(c.timeoutMs),
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of r.body) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY) throw new Error(`answer larger than ${MAX_BODY} bytes`);
      chunks.push(chunk as Buffer);
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(r.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    log(`central management: ${c.purpose}`, { method: c.method, url: c.url, status: r.statusCode, ms: Date.now() - started });
    return { status: r.statusCode, headers, body: Buffer.concat(chunks) };
  } catch (err) {
    const reason = (err as Error).name === 'TimeoutError' ? `timed out after ${c.timeoutMs} ms` : (err as Error).message;
    log(`central management: ${c.purpose} failed`, { method: c.method, url: c.url, error: reason, ms: Date.now() - started });
    throw new Error(`${c.method} ${c.url}: ${reason}`);
  }
}

/** POST of a JSON message (feedbacks, heartbeat); throws unless the answer is 2xx. */
export async function postJson(url: string, timeoutMs: number, message: unknown, purpose: string, log: InfoLog): Promise<void> {
  const r = await call({ method: 'POST', url, timeoutMs, headers: { 'content-type': 'application/json' }, body: JSON.stringify(message), purpose }, log);
  if (r.status < 200 || r.status >= 300) throw new Error(`POST ${url}: HTTP ${r.status}`);
}
