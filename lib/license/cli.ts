// `svc license ...`: the issuer's side of licensing (key pair, signing) and an offline check.
//   svc license keygen --out DIR [--force]
//   svc license sign --key KEY --name N --type T --serial S [--features ALL] (--days D | --not-after T)
//                    [--not-before T] --out FILE
//   svc license verify FILE --pub PUB
// The functions are exported so that tests (and other tools) can call them without a process.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../files/atomic.js';
import { formatLicenseTime, licenseToXml, parseLicense, parseLicenseTime, signLicense, type License } from './license.js';
import { LicenseService, MESSAGES, type LicenseInfo } from './service.js';

class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
    this.name = 'CliError';
  }
}

/** Writes `license.key` (PKCS#8, mode 0600) and `license.pub` (SPKI) into `dir`. */
export async function keygen(dir: string, opts: { force?: boolean } = {}): Promise<{ key: string; pub: string }> {
  const key = path.join(dir, 'license.key');
  const pub = path.join(dir, 'license.pub');
  if (opts.force !== true) {
    for (const f of [key, pub]) {
      if (await fs.stat(f).then(() => true, () => false)) throw new CliError(`${f} exists; use --force to replace it`);
    }
  }
  const pair = crypto.generateKeyPairSync('ed25519');
  await fs.mkdir(dir, { recursive: true });
  await writeFileAtomic(key, pair.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
  await fs.chmod(key, 0o600);
  await writeFileAtomic(pub, pair.publicKey.export({ type: 'spki', format: 'pem' }) as string);
  return { key, pub };
}

export interface SignOptions {
  /** PEM private key file (Ed25519, or RSA for rsa-sha256). */
  key: string;
  name: string;
  type: string;
  serial: string;
  features?: string;
  /** `yyyymmddhhmmssZ`; default now. */
  notBefore?: string;
  /** `yyyymmddhhmmssZ`; or give `days`. */
  notAfter?: string;
  days?: number;
  now?: number;
}

export async function issueLicense(o: SignOptions): Promise<{ license: License; xml: string }> {
  let pem: string;
  try {
    pem = await fs.readFile(o.key, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read the private key ${o.key}: ${(err as Error).message}`);
  }
  let privateKey;
  try {
    privateKey = crypto.createPrivateKey(pem);
  } catch (err) {
    throw new CliError(`${o.key} is not a PEM private key: ${(err as Error).message}`);
  }
  // Whole seconds: the license time format has no fraction.
  const now = Math.floor((o.now ?? Date.now()) / 1000) * 1000;
  const nb = o.notBefore === undefined ? now : parseLicenseTime(o.notBefore);
  if (nb === undefined) throw new CliError(`--not-before "${o.notBefore}" is not yyyymmddhhmmssZ`);
  let na: number | undefined;
  if (o.notAfter !== undefined) {
    na = parseLicenseTime(o.notAfter);
    if (na === undefined) throw new CliError(`--not-after "${o.notAfter}" is not yyyymmddhhmmssZ`);
  } else {
    if (o.days === undefined || !Number.isFinite(o.days) || o.days <= 0) throw new CliError('--days must be a positive number (or give --not-after)');
    na = nb + Math.round(o.days * 86_400_000);
  }
  try {
    const license = signLicense({
      Name: o.name,
      Type: o.type,
      SerialNumber: o.serial,
      AllowedFeatures: o.features ?? 'ALL',
      NotBefore: formatLicenseTime(nb),
      NotAfter: formatLicenseTime(na),
    }, privateKey);
    return { license, xml: licenseToXml(license) };
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}

/**
 * The license information of a license file as the server would show it once installed, with a
 * throwaway service reading that file and key. Throws CliError unless it is Available.
 */
export async function verifyLicenseFile(file: string, pub: string, now?: () => number): Promise<LicenseInfo> {
  let xml: string;
  try {
    xml = await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    parseLicense(xml);
  } catch (err) {
    throw new CliError(`Cannot parse license - ${(err as Error).message}`);
  }
  const s = await LicenseService.open({ path: file, publicKey: pub, ...(now === undefined ? {} : { now }) });
  const info = s.current();
  if (info.Status !== 'Available') {
    // The messages of the API (document 1) where it has one for the case.
    throw new CliError(info.Status === 'Expired' ? `${MESSAGES.expired} (NotAfter ${info.Validity.NotAfter})` : s.problem() ?? info.Status);
  }
  return info;
}

/** `--flag value` pairs and positional arguments; a flag without a value is `true`. */
export function parseFlags(args: string[], booleans: string[] = []): { flags: Record<string, string | true>; positional: string[] } {
  const flags: Record<string, string | true> = {};
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(2, eq) : a.slice(2);
    if (eq > 0) flags[name] = a.slice(eq + 1);
    else if (booleans.includes(name) || i + 1 >= args.length || args[i + 1]!.startsWith('--')) flags[name] = true;
    else flags[name] = args[++i]!;
  }
  return { flags, positional };
}

function need(flags: Record<string, string | true>, name: string): string {
  const v = flags[name];
  if (typeof v !== 'string' || v === '') throw new CliError(`--${name} is required`, 2);
  return v;
}

function opt(flags: Record<string, string | true>, name: string): string | undefined {
  const v = flags[name];
  if (v === true) throw new CliError(`--${name} needs a value`, 2);
  return v;
}

const LICENSE_USAGE = [
  'svc license keygen --out DIR [--force]',
  'svc license sign --key KEY --name N --type T --serial S [--features ALL] (--days D | --not-after yyyymmddhhmmssZ) [--not-before yyyymmddhhmmssZ] --out FILE',
  'svc license verify FILE --pub PUB',
].join('\n');

/** Runs `svc license <args>`; returns the exit code (0 ok, 1 failure, 2 usage). */
export async function licenseCommand(args: string[], out: (s: string) => void, err: (s: string) => void): Promise<number> {
  const [sub, ...rest] = args;
  const { flags, positional } = parseFlags(rest, ['force']);
  try {
    switch (sub) {
      case 'keygen': {
        const r = await keygen(path.resolve(need(flags, 'out')), { force: flags.force === true });
        out(`private key: ${r.key}\npublic key:  ${r.pub}\n`);
        return 0;
      }
      case 'sign': {
        const days = opt(flags, 'days');
        const notBefore = opt(flags, 'not-before');
        const notAfter = opt(flags, 'not-after');
        const features = opt(flags, 'features');
        const { xml } = await issueLicense({
          key: path.resolve(need(flags, 'key')),
          name: need(flags, 'name'),
          type: need(flags, 'type'),
          serial: need(flags, 'serial'),
          ...(features === undefined ? {} : { features }),
          ...(notBefore === undefined ? {} : { notBefore }),
          ...(notAfter === undefined ? {} : { notAfter }),
          ...(days === undefined ? {} : { days: Number(days) }),
        });
        const file = path.resolve(need(flags, 'out'));
        await writeFileAtomic(file, xml);
        out(`${file}\n`);
        return 0;
      }
      case 'verify': {
        const file = positional[0];
        if (file === undefined) throw new CliError('the license FILE is required', 2);
        const info = await verifyLicenseFile(path.resolve(file), path.resolve(need(flags, 'pub')));
        out(`${JSON.stringify(info, null, 2)}\n`);
        return 0;
      }
      default:
        err(`usage:\n${LICENSE_USAGE}\n`);
        return 2;
    }
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    err(`${e.message}\n`);
    if (e.exitCode === 2) err(`usage:\n${LICENSE_USAGE}\n`);
    return e.exitCode;
  }
}
