// Turning an upload (JSON body, multipart files, or a package) into a validated candidate
// setting, with the failure codes of document 1: 1 package missing, 2 unpacking failed,
// 3 setting.json cannot be loaded, 4 content wrong (reason = the bad JSON paths), 5 a linked
// file missing (reason = its path).
import fs from 'node:fs/promises';
import path from 'node:path';
import { parseSetting } from '../setting-check/load.js';
import { formatIssue, SettingError, type SettingIssue } from '../setting/issues.js';
import { isPlainObject } from '../setting/merge.js';
import type { Setting } from '../setting/types.js';
import { checkSecrets, type SecretKey } from '../license/secret-box.js';
import { outsideLinkedDirs } from './linked-dirs.js';
import { certIssues } from '../tls/certificates.js';
import { isUrlSource } from '../tls/fetched.js';
import { installUrlSources } from './url-sources.js';
import { MultipartLimitError, parseMultipart, type Part } from './multipart.js';
import { basehostRefs, certRefs, packagePath, SETTING_FILE, sizeText, sourceOf, unpack, type LinkedRef, type UnpackLimits } from './package.js';

export type LoadCode = 1 | 2 | 3 | 4 | 5;

export class LoadFailure extends Error {
  /**
   * `issues`: each refused member at its JSON path, when the failure names members (wrong
   * content, a missing linked file), so that a caller can print them one per line.
   */
  constructor(readonly code: LoadCode, reason: string, readonly issues?: SettingIssue[]) {
    super(reason);
    this.name = 'LoadFailure';
  }
}

/** Code 4 with the issues as the reason, joined as document 1's reason string. */
function wrongContent(issues: SettingIssue[]): LoadFailure {
  return new LoadFailure(4, issues.map(formatIssue).join('; '), issues);
}

export interface Candidate {
  setting: Setting;
  /** setting.json as it will be written. */
  raw: string;
  /** Linked files; each one is present (in `staged` or on disk) unless `checkFiles` was false. */
  refs: LinkedRef[];
  /** Directory holding the uploaded files, removed by the caller. */
  staged?: string;
}

const GZIP = Buffer.from([0x1f, 0x8b]);

/**
 * Puts a multipart upload into a new directory under `workDir`: a gzipped part is the package
 * (unpacked within `limits`), other parts named `partName` are setting.json and linked files by
 * file name. On every failure nothing is left under `workDir`.
 */
export async function stageMultipart(body: Buffer, contentType: string, partName: string, workDir: string, limits: UnpackLimits): Promise<string> {
  const parts = (await readParts(body, contentType, limits)).filter((p) => p.name === partName && p.data.length > 0);
  if (parts.length === 0) throw new LoadFailure(1, `no setting package or file in part "${partName}"`);
  const pkg = parts.find((p) => p.data.subarray(0, 2).equals(GZIP) || /\.(tgz|tar\.gz)$/i.test(p.filename ?? ''));
  if (pkg !== undefined) {
    let dir: string;
    try {
      dir = await unpack(pkg.data, workDir, limits);
    } catch (err) {
      throw new LoadFailure(2, `cannot unpack ${pkg.filename ?? 'the package'}: ${(err as Error).message}`);
    }
    return settingRoot(dir);
  }
  // The parts are the files of a package, so the package's bounds apply to them too (busboy
  // counted the file parts; this counts the ones that matter, fields included).
  if (parts.length > limits.maxFiles) throw tooManyFiles(limits);
  if (parts.reduce((n, p) => n + p.data.length, 0) > limits.maxBytes) {
    throw new LoadFailure(2, `the upload's files come to more than ${limits.maxBytes} bytes (env.management.api.upload.maxUnpackedSize)`);
  }
  // A lone part is setting.json whatever its file name; otherwise the part named setting.json is.
  const settingPart = parts.length === 1 ? parts[0] : parts.find((p) => path.basename(p.filename ?? '') === SETTING_FILE);
  // Several files and none of them setting.json: the setting itself was not uploaded (code 1).
  if (settingPart === undefined) throw new LoadFailure(1, `no ${SETTING_FILE} among the ${parts.length} files of part "${partName}"`);
  await fs.mkdir(workDir, { recursive: true });
  const dir = await fs.mkdtemp(path.join(workDir, 'files-'));
  try {
    for (const p of parts) {
      const name = p === settingPart ? SETTING_FILE : packagePath(p.filename ?? '');
      if (name === '') continue;
      await fs.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
      await fs.writeFile(path.join(dir, name), p.data);
    }
  } catch (err) {
    await fs.rm(dir, { recursive: true, force: true });
    throw err;
  }
  return dir;
}

const tooManyFiles = (limits: UnpackLimits): LoadFailure =>
  new LoadFailure(2, `the upload holds more than ${limits.maxFiles} files (env.management.api.upload.maxFiles)`);

/**
 * The parts of a multipart upload, with the package bounds as busboy's limits, refused (error 2)
 * while parsing: more file parts than maxFiles, or a part too large to be a package within
 * maxUnpackedSize. Compression can make a package a little larger than its content (deflate's
 * stored blocks add 5 bytes per 64 KiB, the gzip header a file name), so the part bound is
 * maxUnpackedSize plus 1/1024 plus 1 KiB; the exact bounds are checked on the unpacked content
 * and on the sum of plain files.
 */
async function readParts(body: Buffer, contentType: string, limits: UnpackLimits): Promise<Part[]> {
  const partSize = limits.maxBytes + Math.ceil(limits.maxBytes / 1024) + 1024;
  try {
    return await parseMultipart(body, contentType, { files: limits.maxFiles, partSize });
  } catch (err) {
    if (!(err instanceof MultipartLimitError)) throw new LoadFailure(1, `malformed multipart body: ${(err as Error).message}`);
    if (err.limit === 'files') throw tooManyFiles(limits);
    throw new LoadFailure(2, `the upload holds a part of more than ${sizeText(limits.maxBytes)} (env.management.api.upload.maxUnpackedSize)`);
  }
}

/** A package made by taring a directory holds setting.json one level down; that level is the root. */
async function settingRoot(dir: string): Promise<string> {
  const names = await fs.readdir(dir);
  if (names.includes(SETTING_FILE) || names.length !== 1) return dir;
  const sub = path.join(dir, names[0]!);
  try {
    await fs.access(path.join(sub, SETTING_FILE));
    return sub;
  } catch {
    return dir;
  }
}

function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (err) {
    throw new LoadFailure(3, `setting.json is not valid JSON: ${(err as Error).message}`);
  }
}

export interface LoadOptions {
  /** The directory of the service's setting.json (basehost files, a relative env.home). */
  settingDir: string;
  /** env.home of the running service: hosts' certificate paths resolve against it. */
  runningHome: string;
  /** Directory of an upload; its files are found before the disk's. */
  staged?: string;
  /** False for a validation of a JSON body: linked files are not required to exist. */
  checkFiles: boolean;
  /**
   * Directories linked files must resolve under (linked-dirs.ts); a file elsewhere is wrong
   * content (code 4). Undefined only to read a file's own env before checking it with that env.
   */
  linkedDirs?: string[];
  /**
   * The key `enc:` secrets must decrypt under (the node's license; undefined inside: none). Absent
   * for offline checks, which cannot know the node's license.
   */
  secrets?: { key: SecretKey | undefined };
}

/** Reads setting.json from `staged` (when `text` is undefined) and validates everything. */
export async function loadCandidate(text: string | undefined, o: LoadOptions): Promise<Candidate> {
  let raw = text;
  if (raw === undefined) {
    if (o.staged === undefined) throw new LoadFailure(1, 'no setting package');
    try {
      raw = await fs.readFile(path.join(o.staged, SETTING_FILE), 'utf8');
    } catch {
      throw new LoadFailure(3, `the package holds no ${SETTING_FILE}`);
    }
  }
  const parsed = parseJsonText(raw);
  const refs = basehostRefs(parsed, o.settingDir);
  await refuseOutside(refs, o.linkedDirs);
  if (o.checkFiles) await requirePresent(refs, o.staged);
  // Basehost files of an upload are read where the upload put them; the service's directory
  // stays the base of a relative env.home.
  let setting: Setting;
  try {
    setting = parseSetting(parsed, { baseDir: o.staged ?? o.settingDir });
  } catch (err) {
    if (!(err instanceof SettingError)) throw err;
    throw wrongContent(err.issues);
  }
  if (o.secrets !== undefined) {
    const bad = checkSecrets(setting, o.secrets.key);
    if (bad.length > 0) throw wrongContent(bad);
  }
  const home = isPlainObject(parsed) && isPlainObject(parsed.env) ? parsed.env.home : undefined;
  if (typeof home === 'string') setting.env.home = path.resolve(o.settingDir, home);
  const certs = certRefs(setting, o.runningHome);
  // A URL source's copy is ours, under the home, wherever the linked directories are.
  await refuseOutside(certs.filter((r) => !isUrlSource(r.written)), o.linkedDirs);
  const fetched = await installUrlSources(certs, o.staged, o.checkFiles);
  if (fetched.length > 0) throw wrongContent(fetched);
  if (o.checkFiles) {
    await requirePresent(certs, o.staged);
    await refuseBadCertificates(setting, certs, o.staged);
  }
  return { setting, raw, refs: [...refs, ...certs], ...(o.staged === undefined ? {} : { staged: o.staged }) };
}

/**
 * Certificates that cannot serve (unparseable, key not matching, expired) refuse the setting as
 * wrong content at the member's JSON path; the files are those the upload brings, else the disk's.
 */
async function refuseBadCertificates(setting: Setting, certs: LinkedRef[], staged: string | undefined): Promise<void> {
  const files = new Map<string, string>();
  for (const r of certs) {
    const src = await sourceOf(r, staged);
    if (src !== undefined) files.set(r.jsonPath, src);
  }
  const issues = certIssues(setting, (i, j) => (src, member) => files.get(`hosting[${i}].https[${j}].${member}`) ?? path.resolve(setting.env.home, src));
  if (issues.length > 0) throw wrongContent(issues);
}

async function refuseOutside(refs: LinkedRef[], dirs: string[] | undefined): Promise<void> {
  if (dirs === undefined) return;
  const issues = await outsideLinkedDirs(refs, dirs);
  if (issues.length > 0) throw wrongContent(issues);
}

async function requirePresent(refs: LinkedRef[], staged: string | undefined): Promise<void> {
  for (const r of refs) {
    const src = await sourceOf(r, staged);
    // document 1's reason is the file's path; the issue names the member that links it.
    if (src === undefined) throw new LoadFailure(5, r.written, [{ path: r.jsonPath, message: `linked file not found: ${r.written}` }]);
    // A basehost file must sit where the parser looks for it inside the upload.
    if (staged !== undefined && r.jsonPath.endsWith('.mode.basehost') && !path.isAbsolute(r.written)) {
      const want = path.resolve(staged, r.written);
      if (want.startsWith(staged + path.sep) && src !== want) {
        await fs.mkdir(path.dirname(want), { recursive: true });
        await fs.copyFile(src, want);
      }
    }
  }
}
