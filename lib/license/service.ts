// LicenseService: the installed license, its status as time passes, and the replacement flow of
// `/setting/license/update` (document 1): check, show the difference, apply on confirmation (or
// at once with force), write the file atomically. A license is only state: replacing it never
// touches the listeners or the workers, so it never interrupts service.
import crypto, { type KeyObject } from 'node:crypto';
import fs from 'node:fs/promises';
import { writeFileAtomic } from '../files/atomic.js';
import { resolvePath } from '../setting/resolve.js';
import type { Setting } from '../setting/types.js';
import {
  FIELDS, parseLicense, parseLicenseTime, LicenseParseError, verifyLicense, type License, type LicenseFields,
} from './license.js';
import { secretKeyOf, type SecretKey } from './secret-box.js';

type LicenseStatus = 'Available' | 'Expired' | 'Invalid' | 'None';
/** The `State` of the monitoring statistics that the license decides. */
export type LicenseState = 'Healthy' | 'Inactive';

/** License information of document 1 (`/get/license`). */
export interface LicenseInfo {
  Name: string;
  Type: string;
  SerialNumber: string;
  Status: LicenseStatus;
  AllowedFeatures: string;
  Validity: { NotBefore: string; NotAfter: string; RemainDays: number };
}

export type LicenseDiff = Record<string, { _asis_: string | null; _tobe_: string }>;
/** The bodies of `/setting/license/update`: a difference to confirm, or a message. */
export type UpdateOutcome = { key: string; diff: LicenseDiff } | { message: string };

export const MESSAGES = {
  done: 'Done',
  invalidSignature: 'Invalid signature',
  expired: 'Expired license',
  notYetValid: 'License not yet valid',
  unknownKey: 'Unknown or expired confirmation key',
} as const;

export interface LicensePaths {
  /** The installed license file. */
  path: string;
  /** PEM public key (SPKI) the license signature is verified against. */
  publicKey: string;
}

/** Where the license and its public key live: `env.license.{path, publicKey}`, relative to env.home. */
export function licensePaths(setting: Setting): LicensePaths {
  return { path: resolvePath(setting, setting.env.license.path), publicKey: resolvePath(setting, setting.env.license.publicKey) };
}

export interface LicenseServiceOptions extends LicensePaths {
  /** Clock, epoch ms (tests move it). */
  now?: () => number;
  /** How long a confirmation key stays valid (default 10 minutes). */
  confirmTtlMs?: number;
}

const DAY = 86_400_000;
const MAX_PENDING = 16;

type Installed =
  | { kind: 'none' }
  | { kind: 'invalid'; reason: string; fields?: LicenseFields }
  | { kind: 'verified'; license: License };

async function readPublicKey(file: string): Promise<KeyObject> {
  let pem: string;
  try {
    pem = await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the public key ${file}: ${(err as Error).message}`);
  }
  try {
    return crypto.createPublicKey(pem);
  } catch (err) {
    throw new Error(`the public key ${file} is not a PEM public key: ${(err as Error).message}`);
  }
}

export class LicenseService {
  private installed: Installed = { kind: 'none' };
  private readonly pending = new Map<string, { license: License; xml: string; expiresAt: number }>();
  private readonly listeners = new Set<(info: LicenseInfo) => void>();
  /** Applications run one after another, so two confirmations cannot interleave their writes. */
  private chain: Promise<unknown> = Promise.resolve();
  private readonly now: () => number;
  private readonly ttl: number;

  constructor(private readonly opts: LicenseServiceOptions) {
    this.now = opts.now ?? Date.now;
    this.ttl = opts.confirmTtlMs ?? 600_000;
  }

  /** A service with the installed license read. */
  static async open(opts: LicenseServiceOptions): Promise<LicenseService> {
    const s = new LicenseService(opts);
    await s.load();
    return s;
  }

  get paths(): LicensePaths {
    return { path: this.opts.path, publicKey: this.opts.publicKey };
  }

  /** (Re-)reads the license file and the public key. Never throws: a bad file makes the license Invalid. */
  async load(): Promise<void> {
    let xml: string;
    try {
      xml = await fs.readFile(this.opts.path, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      this.installed = code === 'ENOENT' ? { kind: 'none' } : { kind: 'invalid', reason: `cannot read ${this.opts.path}: ${(err as Error).message}` };
      return;
    }
    this.installed = await this.check(xml);
  }

  private async check(xml: string): Promise<Installed> {
    let license: License;
    try {
      license = parseLicense(xml);
    } catch (err) {
      return { kind: 'invalid', reason: `cannot parse license - ${(err as Error).message}` };
    }
    let key: KeyObject;
    try {
      key = await readPublicKey(this.opts.publicKey);
    } catch (err) {
      return { kind: 'invalid', reason: (err as Error).message, fields: license };
    }
    if (!verifyLicense(license, key)) return { kind: 'invalid', reason: MESSAGES.invalidSignature, fields: license };
    return { kind: 'verified', license };
  }

  /** License information of document 1, as of now (a license expires without any reload). */
  current(): LicenseInfo {
    const i = this.installed;
    const f: LicenseFields | undefined = i.kind === 'verified' ? i.license : i.kind === 'invalid' ? i.fields : undefined;
    const now = this.now();
    let status: LicenseStatus;
    if (i.kind === 'none') status = 'None';
    else if (i.kind === 'invalid') status = 'Invalid';
    else if (now >= parseLicenseTime(i.license.NotAfter)!) status = 'Expired';
    // A license whose period has not begun does not license anything yet.
    else if (now < parseLicenseTime(i.license.NotBefore)!) status = 'Invalid';
    else status = 'Available';
    const notAfter = f === undefined ? undefined : parseLicenseTime(f.NotAfter);
    return {
      Name: f?.Name ?? '',
      Type: f?.Type ?? '',
      SerialNumber: f?.SerialNumber ?? '',
      Status: status,
      AllowedFeatures: f?.AllowedFeatures ?? '',
      Validity: {
        NotBefore: f?.NotBefore ?? '',
        NotAfter: f?.NotAfter ?? '',
        // Whole days left, rounded up: 0 exactly when the license has expired (or there is none).
        RemainDays: notAfter === undefined || status === 'Invalid' ? 0 : Math.max(0, Math.ceil((notAfter - now) / DAY)),
      },
    };
  }

  /** The key of `enc:` secrets: any license whose signature verifies, expired or not (a node keeps loading its setting). */
  secretKey(): SecretKey | undefined {
    return this.installed.kind === 'verified' ? secretKeyOf(this.installed.license) : undefined;
  }

  /** `Healthy` with an Available license; `Inactive` when it is missing, invalid or expired. */
  state(): LicenseState {
    return this.current().Status === 'Available' ? 'Healthy' : 'Inactive';
  }

  /** Why the installed license is not Available (for logs), or undefined when it is. */
  problem(): string | undefined {
    const i = this.installed;
    if (i.kind === 'none') return `no license file at ${this.opts.path}`;
    if (i.kind === 'invalid') return i.reason;
    const s = this.current().Status;
    return s === 'Available' ? undefined : s === 'Expired' ? `license expired at ${i.license.NotAfter}` : `license not valid before ${i.license.NotBefore}`;
  }

  /** Called after a license was applied, with the new information. */
  onChange(listener: (info: LicenseInfo) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * `POST /setting/license/update`: a license that parses, verifies and is within its period is
   * applied at once with `force`, else offered as `{key, diff}` for `confirm(key)`.
   */
  async update(xml: string, force: boolean): Promise<UpdateOutcome> {
    let license: License;
    try {
      license = parseLicense(xml);
    } catch (err) {
      if (err instanceof LicenseParseError) return { message: `Cannot parse license - ${err.message}` };
      throw err;
    }
    let key: KeyObject;
    try {
      key = await readPublicKey(this.opts.publicKey);
    } catch (err) {
      return { message: `Cannot verify license - ${(err as Error).message}` };
    }
    if (!verifyLicense(license, key)) return { message: MESSAGES.invalidSignature };
    const refused = this.periodProblem(license);
    if (refused !== undefined) return { message: refused };
    if (force) return this.apply(license, xml);

    this.prunePending();
    const confirmKey = crypto.randomBytes(16).toString('hex');
    this.pending.set(confirmKey, { license, xml, expiresAt: this.now() + this.ttl });
    return { key: confirmKey, diff: this.diff(license) };
  }

  /** `GET /setting/license/update?confirm=<key>`: applies the license offered under `key`. */
  async confirm(key: string): Promise<UpdateOutcome> {
    this.prunePending();
    const p = this.pending.get(key);
    if (p === undefined) return { message: MESSAGES.unknownKey };
    this.pending.delete(key);
    // The license may have expired while it waited for confirmation.
    const refused = this.periodProblem(p.license);
    if (refused !== undefined) return { message: refused };
    return this.apply(p.license, p.xml);
  }

  private periodProblem(l: License): string | undefined {
    const now = this.now();
    if (now >= parseLicenseTime(l.NotAfter)!) return MESSAGES.expired;
    if (now < parseLicenseTime(l.NotBefore)!) return `${MESSAGES.notYetValid} (NotBefore ${l.NotBefore})`;
    return undefined;
  }

  private diff(next: License): LicenseDiff {
    const i = this.installed;
    const old: LicenseFields | undefined = i.kind === 'verified' ? i.license : i.kind === 'invalid' ? i.fields : undefined;
    const diff: LicenseDiff = {};
    for (const k of FIELDS) if (old?.[k] !== next[k]) diff[k] = { _asis_: old?.[k] ?? null, _tobe_: next[k] };
    return diff;
  }

  private prunePending(): void {
    const now = this.now();
    for (const [k, p] of this.pending) if (p.expiresAt <= now) this.pending.delete(k);
    // Bounded: the oldest offers go first (Map keeps insertion order).
    while (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
  }

  private apply(license: License, xml: string): Promise<UpdateOutcome> {
    const run = async (): Promise<UpdateOutcome> => {
      await writeFileAtomic(this.opts.path, xml);
      this.installed = { kind: 'verified', license };
      // Every other offer was a difference against the license just replaced.
      this.pending.clear();
      const info = this.current();
      for (const l of this.listeners) {
        try {
          l(info);
        } catch { /* a listener's failure is its own */ }
      }
      return { message: MESSAGES.done };
    };
    const next = this.chain.then(run, run);
    this.chain = next.catch(() => undefined);
    return next;
  }
}
