// Reading a release repository: a local directory or an http(s) URL with the layout of
// format.ts. Only on an install command, never on a request path.
import fs from 'node:fs/promises';
import path from 'node:path';
import { request } from 'undici';
import { INDEX, VERSION } from './format.js';

export interface Repository {
  readonly where: string;
  /** The versions the repository lists (index.json). */
  versions(): Promise<string[]>;
  /** A file of the repository; undefined when it has none by that name. */
  file(name: string): Promise<Buffer | undefined>;
}

const MAX_BYTES = 512 * 1024 * 1024;

class DirRepository implements Repository {
  constructor(readonly where: string) {}

  async versions(): Promise<string[]> {
    return parseIndex(await this.file(INDEX), this.where);
  }

  async file(name: string): Promise<Buffer | undefined> {
    return fs.readFile(path.join(this.where, name)).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return undefined;
      throw e;
    });
  }
}

class HttpRepository implements Repository {
  constructor(readonly where: string) {}

  async versions(): Promise<string[]> {
    return parseIndex(await this.file(INDEX), this.where);
  }

  async file(name: string): Promise<Buffer | undefined> {
    const url = new URL(name, this.where.endsWith('/') ? this.where : `${this.where}/`);
    const r = await request(url, { headersTimeout: 30_000, bodyTimeout: 120_000 });
    if (r.statusCode === 404) { await r.body.dump(); return undefined; }
    if (r.statusCode !== 200) { await r.body.dump(); throw new Error(`${url.href} answered ${r.statusCode}`); }
    const size = Number(r.headers['content-length'] ?? 0);
    if (size > MAX_BYTES) { await r.body.dump(); throw new Error(`${url.href} is larger than ${MAX_BYTES} bytes`); }
    return Buffer.from(await r.body.arrayBuffer());
  }
}

function parseIndex(data: Buffer | undefined, where: string): string[] {
  if (data === undefined) throw new Error(`${where} holds no ${INDEX}`);
  let versions: unknown;
  try {
    versions = (JSON.parse(data.toString('utf8')) as { versions?: unknown }).versions;
  } catch {
    throw new Error(`${where}/${INDEX} is not JSON`);
  }
  if (!Array.isArray(versions)) throw new Error(`${where}/${INDEX} has no "versions" list`);
  return versions.filter((v): v is string => typeof v === 'string' && VERSION.test(v));
}

/** `spec`: env.install.repository; a relative directory resolves against env.home. */
export function openRepository(spec: string, home: string): Repository {
  if (/^https?:\/\//i.test(spec)) return new HttpRepository(spec);
  return new DirRepository(path.resolve(home, spec));
}
