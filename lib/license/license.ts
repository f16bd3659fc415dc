// The license document: its fields, the canonical text its signature covers, signing and
// verification with node:crypto, and the yyyymmddhhmmssZ times of document 1.
//
// Canonical form (what the signature covers): the six fields in the fixed order of FIELDS, each
// as `<Field>=<value>\n`, UTF-8, values exactly as decoded from the XML (no trimming). Values may
// not contain a line break, so no two different licenses have the same canonical text. Any
// formatting of the XML itself (white space between elements, comments, entity spelling, element
// order) is outside the signature, so a license re-indented by an editor still verifies.
import crypto, { type KeyObject } from 'node:crypto';
import { escapeXml, parseXml, XmlError } from './xml.js';

export const FIELDS = ['Name', 'Type', 'SerialNumber', 'AllowedFeatures', 'NotBefore', 'NotAfter'] as const;
type Field = (typeof FIELDS)[number];
const ELEMENTS = new Set<string>([...FIELDS, 'Signature']);
export type LicenseFields = Record<Field, string>;

type SignatureAlg = 'ed25519' | 'rsa-sha256';

export interface License extends LicenseFields {
  signature: { alg: SignatureAlg; value: string };
}

/** A license that cannot be read; `message` is the parser detail. */
export class LicenseParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LicenseParseError';
  }
}

const TIME = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/;

/** Epoch milliseconds of a `yyyymmddhhmmssZ` time (UTC), or undefined when malformed. */
export function parseLicenseTime(s: string): number | undefined {
  const m = TIME.exec(s);
  if (m === null) return undefined;
  const [y, mo, d, h, mi, se] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const ms = Date.UTC(y, mo - 1, d, h, mi, se);
  const back = new Date(ms);
  // Date.UTC rolls 20260231 over into March; a round trip catches impossible dates.
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || se > 59) return undefined;
  return ms;
}

export function formatLicenseTime(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:T]/g, '').replace(/\.\d+Z$/, 'Z');
}

export function canonicalText(f: LicenseFields): string {
  return FIELDS.map((k) => `${k}=${f[k]}\n`).join('');
}

function algOf(key: KeyObject): SignatureAlg {
  if (key.asymmetricKeyType === 'ed25519') return 'ed25519';
  if (key.asymmetricKeyType === 'rsa') return 'rsa-sha256';
  throw new Error(`unsupported key type ${key.asymmetricKeyType ?? key.type}; use an Ed25519 or RSA key`);
}

/** The digest node:crypto wants for an algorithm (Ed25519 signs the message itself). */
function digestOf(alg: SignatureAlg): string | null {
  return alg === 'ed25519' ? null : 'sha256';
}

/** Checks every field; throws LicenseParseError naming the first bad one. */
function checkFields(f: LicenseFields): void {
  for (const k of FIELDS) {
    if (/[\r\n]/.test(f[k])) throw new LicenseParseError(`<${k}> contains a line break`);
  }
  for (const k of ['Name', 'Type', 'SerialNumber', 'AllowedFeatures'] as const) {
    if (f[k].trim() === '') throw new LicenseParseError(`<${k}> is empty`);
  }
  const nb = parseLicenseTime(f.NotBefore);
  const na = parseLicenseTime(f.NotAfter);
  if (nb === undefined) throw new LicenseParseError(`<NotBefore> "${f.NotBefore}" is not a yyyymmddhhmmssZ time`);
  if (na === undefined) throw new LicenseParseError(`<NotAfter> "${f.NotAfter}" is not a yyyymmddhhmmssZ time`);
  if (na <= nb) throw new LicenseParseError('<NotAfter> is not after <NotBefore>');
}

export function signLicense(fields: LicenseFields, privateKey: KeyObject): License {
  checkFields(fields);
  const alg = algOf(privateKey);
  const value = crypto.sign(digestOf(alg), Buffer.from(canonicalText(fields), 'utf8'), privateKey).toString('base64');
  return { ...fields, signature: { alg, value } };
}

/** True when the signature verifies against `publicKey` (and its algorithm fits the key). */
export function verifyLicense(lic: License, publicKey: KeyObject): boolean {
  let keyAlg: SignatureAlg;
  try {
    keyAlg = algOf(publicKey);
  } catch {
    return false;
  }
  if (keyAlg !== lic.signature.alg) return false;
  const sig = Buffer.from(lic.signature.value, 'base64');
  if (sig.length === 0) return false;
  try {
    return crypto.verify(digestOf(keyAlg), Buffer.from(canonicalText(lic), 'utf8'), publicKey, sig);
  } catch {
    return false;
  }
}

/** Reads a license document; throws LicenseParseError with the parser detail. */
export function parseLicense(xml: string): License {
  let root;
  try {
    root = parseXml(xml);
  } catch (err) {
    if (err instanceof XmlError) throw new LicenseParseError(err.message);
    throw err;
  }
  if (root.name !== 'License') throw new LicenseParseError(`root element is <${root.name}>, expected <License>`);
  if (root.text.trim() !== '') throw new LicenseParseError('text directly inside <License>');
  const seen = new Map<string, { text: string; attrs: Record<string, string> }>();
  for (const child of root.children) {
    if (!ELEMENTS.has(child.name)) throw new LicenseParseError(`unknown element <${child.name}>`);
    if (seen.has(child.name)) throw new LicenseParseError(`<${child.name}> appears twice`);
    if (child.children.length > 0) throw new LicenseParseError(`<${child.name}> contains elements`);
    seen.set(child.name, { text: child.text, attrs: child.attrs });
  }
  const fields = {} as LicenseFields;
  for (const k of FIELDS) {
    const v = seen.get(k);
    if (v === undefined) throw new LicenseParseError(`<${k}> is missing`);
    fields[k] = v.text;
  }
  checkFields(fields);
  const sig = seen.get('Signature');
  if (sig === undefined) throw new LicenseParseError('<Signature> is missing');
  const alg = (sig.attrs.alg ?? 'ed25519').toLowerCase();
  if (alg !== 'ed25519' && alg !== 'rsa-sha256') throw new LicenseParseError(`<Signature alg="${alg}"> is not ed25519 or rsa-sha256`);
  const value = sig.text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value)) throw new LicenseParseError('<Signature> is not base64');
  return { ...fields, signature: { alg, value } };
}

export function licenseToXml(lic: License): string {
  const lines = FIELDS.map((k) => `  <${k}>${escapeXml(lic[k])}</${k}>`);
  lines.push(`  <Signature alg="${lic.signature.alg}">${lic.signature.value}</Signature>`);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<License>\n${lines.join('\n')}\n</License>\n`;
}
