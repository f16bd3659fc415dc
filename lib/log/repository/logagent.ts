// The logagent repository: the unit's (exported) lines pushed in one HTTP POST to `url`, as
// text/plain, gzipped with `Content-Encoding: gzip` when the repository compresses. The
// expanded `path` goes along in `X-Svc-Log-Path` so the agent can file the lines.
import fs from 'node:fs';
import { request } from 'undici';
import type { Spooled } from './unit.js';

const TIMEOUT_MS = 60_000;

export async function pushLines(url: string, path: string, body: Spooled, gzip: boolean): Promise<void> {
  const r = await request(url, {
    method: 'POST',
    headers: {
      'content-type': 'text/plain; charset=utf-8', 'content-length': String(body.bytes), 'x-svc-log-path': path,
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    },
    body: fs.createReadStream(body.file),
    headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS,
  });
  await r.body.dump();
  if (r.statusCode < 200 || r.statusCode >= 300) throw new Error(`POST ${url}: HTTP ${r.statusCode}`);
}
