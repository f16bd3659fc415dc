// Certificate sources given as URLs: fetched when a setting is loaded (deploy, upload, start)
// into their copy under the service home (lib/tls/fetched.ts), where the workers read
// them and from where the setting's package takes them into the history. A package that brings
// the copy (a restore) installs it without the network.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { SettingIssue } from '../setting/issues.js';
import { isUrlSource } from '../tls/fetched.js';
import { writeFileAtomic } from '../files/atomic.js';
import type { LinkedRef } from './package.js';

/** A source that does not answer within this is refused (the load waits for it). */
const FETCH_TIMEOUT_MS = 10_000;
/** PEM files are a few KB; a chain a few tens. */
const MAX_BYTES = 1024 * 1024;

async function fetchSource(url: string, timeoutMs: number): Promise<Buffer> {
  if (!/^https?:\/\//i.test(url)) throw new Error('only http:// and https:// sources can be fetched');
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const e = err as Error & { cause?: Error };
    if (e.name === 'TimeoutError') throw new Error(`no answer within ${timeoutMs / 1000} s`);
    throw new Error(`cannot be fetched: ${e.cause?.message ?? e.message}`);
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    throw new Error(`answered ${res.status}, not 200`);
  }
  const body = Buffer.from(await res.arrayBuffer());
  if (body.length > MAX_BYTES) throw new Error(`is over ${MAX_BYTES} bytes`);
  return body;
}

async function exists(p: string): Promise<boolean> {
  return fs.stat(p).then((s) => s.isFile(), () => false);
}

/**
 * Puts the content of every URL source among `refs` at its target: from `staged` when the upload
 * or package brings it, else fetched when `fetch` (false: a validation that reads no linked
 * file). Each URL is fetched once. Returns the problems at their JSON paths; nothing else changes
 * for a source that failed.
 */
export async function installUrlSources(refs: LinkedRef[], staged: string | undefined, fetch: boolean, timeoutMs = FETCH_TIMEOUT_MS): Promise<SettingIssue[]> {
  const issues: SettingIssue[] = [];
  const done = new Map<string, Promise<string | undefined>>();
  for (const r of refs) {
    if (!isUrlSource(r.written)) continue;
    let work = done.get(r.target);
    if (work === undefined) {
      work = (async () => {
        try {
          const packaged = staged === undefined ? undefined : path.join(staged, r.inPackage);
          let data: Buffer;
          if (packaged !== undefined && await exists(packaged)) data = await fs.readFile(packaged);
          else if (fetch) data = await fetchSource(r.written, timeoutMs);
          else return undefined;
          await fs.mkdir(path.dirname(r.target), { recursive: true });
          await writeFileAtomic(r.target, data);
          return undefined;
        } catch (err) {
          return `${r.written} ${(err as Error).message}`;
        }
      })();
      done.set(r.target, work);
    }
    const problem = await work;
    if (problem !== undefined) issues.push({ path: r.jsonPath, message: problem });
  }
  return issues;
}
