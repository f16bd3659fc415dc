// Setting packages: a gzipped tar holding `setting.json` and the files it links (certificates,
// basehost host files). A linked file is stored at the path the setting writes, made relative
// (a leading `/` dropped, `..` written as `_up_`), so that one package restores the same files
// wherever the service home is. An uploaded package may also hold a linked file flat, under its
// base name.
import { constants as bufferConstants } from 'node:buffer';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import * as tar from 'tar';
import { isPlainObject } from '../setting/merge.js';
import { parseSize } from '../setting/size.js';
import type { Setting } from '../setting/types.js';
import { fetchedName, isUrlSource } from '../tls/fetched.js';

export const SETTING_FILE = 'setting.json';
export interface LinkedRef {
  /** JSON path of the member that names the file. */
  jsonPath: string;
  /** The path as the setting writes it. */
  written: string;
  /** Where the service reads it. */
  target: string;
  /** Where it sits in a package. */
  inPackage: string;
}

const URL_RE = /^[a-z][a-z0-9+.-]*:\/\//i;

export function packagePath(written: string): string {
  return path.posix.normalize(written.replace(/\\/g, '/')).split('/')
    .filter((s) => s !== '' && s !== '.')
    .map((s) => (s === '..' ? '_up_' : s))
    .join('/');
}

function ref(jsonPath: string, written: unknown, base: string): LinkedRef[] {
  if (typeof written !== 'string' || written === '' || URL_RE.test(written)) return [];
  return [{ jsonPath, written, target: path.resolve(base, written), inPackage: packagePath(written) }];
}

/** A certificate source given as a URL: its fetched copy (lib/tls/fetched.ts) is the linked file. */
function urlRef(jsonPath: string, written: unknown, base: string): LinkedRef[] {
  if (typeof written !== 'string' || !isUrlSource(written)) return [];
  const name = fetchedName(written);
  return [{ jsonPath, written, target: path.resolve(base, name), inPackage: name }];
}

/**
 * Host files named by `mode.basehost` in the file as written (a basehost that names no host of
 * hosting[] is a file path, relative to the setting's directory). Read from the raw JSON because
 * they must be present before the setting can be parsed at all.
 */
export function basehostRefs(raw: unknown, settingDir: string): LinkedRef[] {
  if (!isPlainObject(raw) || !Array.isArray(raw.hosting)) return [];
  const names = new Set(raw.hosting.map((h: unknown) => (isPlainObject(h) ? h.name : undefined)));
  return raw.hosting.flatMap((h: unknown, i) => {
    const b = isPlainObject(h) && isPlainObject(h.mode) ? h.mode.basehost : undefined;
    return typeof b === 'string' && !names.has(b) ? ref(`hosting[${i}].mode.basehost`, b, settingDir) : [];
  });
}

/**
 * Certificate files of a parsed setting: hosting[].https[] resolve against `hostHome` (the home
 * of the running service, which serves the hosts), env.management.api.https against the
 * setting's own env.home (it takes effect only at the next start, with that env).
 */
export function certRefs(setting: Setting, hostHome: string): LinkedRef[] {
  const out: LinkedRef[] = [];
  setting.hosting.forEach((h, i) => (h.https ?? []).forEach((c, j) => {
    for (const k of ['cert', 'key', 'ca'] as const) out.push(...ref(`hosting[${i}].https[${j}].${k}`, c[k], hostHome), ...urlRef(`hosting[${i}].https[${j}].${k}`, c[k], hostHome));
  }));
  const api = setting.env.management.api.https;
  if (api !== undefined) {
    for (const k of ['cert', 'key', 'ca'] as const) out.push(...ref(`env.management.api.https.${k}`, api[k], setting.env.home));
  }
  return out;
}

async function exists(p: string): Promise<boolean> {
  try {
    return (await fs.stat(p)).isFile();
  } catch {
    return false;
  }
}

/** Where a linked file comes from: the staged upload (by path, then flat) or the disk. */
export async function sourceOf(r: LinkedRef, staged: string | undefined): Promise<string | undefined> {
  if (staged !== undefined) {
    for (const p of [path.join(staged, r.inPackage), path.join(staged, path.basename(r.written))]) if (await exists(p)) return p;
  }
  return (await exists(r.target)) ? r.target : undefined;
}

/** md5 of the setting.json text; the last part of a history hash. */
export function md5(data: string | Buffer): string {
  return createHash('md5').update(data).digest('hex');
}

/**
 * A digest of everything a package of `raw` holds: setting.json and each linked file (by its
 * place in the package, a missing one marked as such). Two settings are the same history entry
 * only when this digest is the same, so a changed certificate alone makes a new entry.
 */
export async function contentHash(raw: string, refs: LinkedRef[], staged?: string): Promise<string> {
  const h = createHash('sha256');
  h.update(`${SETTING_FILE}\0`).update(raw).update('\0');
  const seen = new Set<string>();
  const ordered = [...refs].sort((a, b) => (a.inPackage < b.inPackage ? -1 : a.inPackage > b.inPackage ? 1 : 0));
  for (const r of ordered) {
    if (seen.has(r.inPackage) || r.inPackage === SETTING_FILE) continue;
    seen.add(r.inPackage);
    const src = await sourceOf(r, staged);
    h.update(`${r.inPackage}\0`);
    h.update(src === undefined ? '\u0001missing' : await fs.readFile(src));
    h.update('\0');
  }
  return h.digest('hex');
}

/** Builds a package of `raw` and the linked files found; missing ones are left out. */
export async function buildPackage(raw: string, refs: LinkedRef[], staged: string | undefined, workDir: string): Promise<Buffer> {
  await fs.mkdir(workDir, { recursive: true });
  const dir = await fs.mkdtemp(path.join(workDir, 'pack-'));
  try {
    await fs.writeFile(path.join(dir, SETTING_FILE), raw);
    const entries = [SETTING_FILE];
    for (const r of refs) {
      const src = await sourceOf(r, staged);
      if (src === undefined || entries.includes(r.inPackage)) continue;
      await fs.mkdir(path.dirname(path.join(dir, r.inPackage)), { recursive: true });
      await fs.copyFile(src, path.join(dir, r.inPackage));
      entries.push(r.inPackage);
    }
    const chunks: Buffer[] = [];
    // portable: no uid/gid/mtime noise beyond what tar needs; the same input gives a stable package.
    const stream = tar.create({ gzip: true, cwd: dir, portable: true }, entries);
    for await (const c of stream) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

export interface UnpackLimits {
  /** Bytes of the decompressed tar content (files plus tar headers). */
  maxBytes: number;
  /** Entries (files, directories, anything else) of the archive, or files of a multipart upload. */
  maxFiles: number;
}

/** The schema defaults of env.management.api.upload, for unpacking before a setting is loaded. */
const DEFAULT_UNPACK_LIMITS: UnpackLimits = { maxBytes: 64 * 1024 * 1024, maxFiles: 1000 };

export function unpackLimits(setting: Setting): UnpackLimits {
  const u = setting.env.management.api.upload;
  return { maxBytes: parseSize(u.maxUnpackedSize), maxFiles: u.maxFiles };
}

/** A byte count as the limits' messages say it: `64 MiB`, or `1500 bytes`. */
export function sizeText(bytes: number): string {
  return bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/**
 * The tar content of a package: gunzipped in the thread pool with the output bounded, so a
 * small bomb stops at the limit instead of filling memory or disk. A package that is not
 * gzipped is taken as a plain tar.
 */
function tarContent(pkg: Buffer, maxBytes: number): Promise<Buffer> {
  const tooLarge = (): Error => new Error(`package unpacks to more than ${sizeText(maxBytes)} (env.management.api.upload.maxUnpackedSize)`);
  if (!pkg.subarray(0, 2).equals(GZIP_MAGIC)) return pkg.length > maxBytes ? Promise.reject(tooLarge()) : Promise.resolve(pkg);
  return new Promise((resolve, reject) => {
    zlib.gunzip(pkg, { maxOutputLength: Math.min(maxBytes + 1, bufferConstants.MAX_LENGTH) }, (err, out) => {
      if (err !== null) reject((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' ? tooLarge() : err);
      else if (out.length > maxBytes) reject(tooLarge());
      else resolve(out);
    });
  });
}

/** A directory has no chunks; a file's chunks are complete once its entry ended. */
interface TarMember { path: string; chunks: Buffer[] | undefined; ended: boolean }

/**
 * The regular files (with their data) and directories of a tar; other entries are skipped.
 * Every failure, the parser's and ours, rejects: nothing is thrown from inside its callbacks,
 * where it would escape the promise and kill the process.
 */
function tarMembers(content: Buffer, maxFiles: number): Promise<TarMember[]> {
  return new Promise((resolve, reject) => {
    const members: TarMember[] = [];
    let entries = 0;
    let failure: Error | undefined;
    let settled = false;
    const settle = (): void => {
      if (settled) return;
      settled = true;
      if (failure !== undefined) reject(failure);
      else if (members.some((m) => !m.ended)) reject(new Error('package is cut off inside a file'));
      else if (entries === 0) reject(new Error('package holds no files'));
      else resolve(members);
    };
    const parser = new tar.Parser({ strict: true, brotli: false, zstd: false });
    parser.on('entry', (entry: tar.ReadEntry) => {
      if (failure === undefined && ++entries > maxFiles) failure = new Error(`package holds more than ${maxFiles} files (env.management.api.upload.maxFiles)`);
      const type = entry.type;
      if (failure !== undefined || !['File', 'OldFile', 'ContiguousFile', 'Directory'].includes(type)) {
        entry.resume();
        return;
      }
      const member: TarMember = { path: entry.path, chunks: type === 'Directory' ? undefined : [], ended: false };
      members.push(member);
      entry.on('data', (c: Buffer) => member.chunks?.push(c));
      entry.on('end', () => { member.ended = true; });
    });
    parser.on('error', (err: Error) => {
      failure ??= err;
      settle();
    });
    parser.on('end', settle);
    try {
      parser.end(content);
    } catch (err) {
      failure ??= err as Error;
      settle();
    }
  });
}

/** Where a member goes inside the unpack directory; a path that leaves it is refused. */
function memberPath(dir: string, name: string): string | undefined {
  const parts = name.split('/').filter((s) => s !== '' && s !== '.');
  if (parts.includes('..')) throw new Error(`package entry "${name}" points outside the package`);
  return parts.length === 0 ? undefined : path.join(dir, ...parts);
}

/**
 * Unpacks a package into a new directory under `workDir` and returns it. Only regular files and
 * directories are taken (no links), an absolute path is taken as relative, a `..` refuses the
 * package, and the decompressed size and the entry count are bounded (`limits`). Throws, with
 * nothing left under `workDir`, when the data is not a readable tar or gzipped tar or is over a
 * limit.
 */
export async function unpack(pkg: Buffer, workDir: string, limits: UnpackLimits = DEFAULT_UNPACK_LIMITS): Promise<string> {
  const members = await tarMembers(await tarContent(pkg, limits.maxBytes), limits.maxFiles);
  await fs.mkdir(workDir, { recursive: true });
  const dir = await fs.mkdtemp(path.join(workDir, 'unpack-'));
  try {
    for (const m of members) {
      const to = memberPath(dir, m.path);
      if (to === undefined) continue;
      if (m.chunks === undefined) {
        await fs.mkdir(to, { recursive: true });
      } else {
        await fs.mkdir(path.dirname(to), { recursive: true });
        await fs.writeFile(to, m.chunks);
      }
    }
    return dir;
  } catch (err) {
    await fs.rm(dir, { recursive: true, force: true });
    throw err;
  }
}
