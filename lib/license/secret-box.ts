// Deterministic encryption of secrets under the installed license (`/command/encryptpassword`,
// and `enc:` values in the secret members of setting.json). The same license and plain text
// always give the same value, another license another one.
//
// Key: HKDF-SHA256 over the license's signed text and its signature (the license is the node's
// secret here, as document 1 says the ciphertext depends on it), split into an AES-256-GCM key
// and an HMAC key. Nonce: HMAC-SHA256(plain) cut to 12 bytes (synthetic IV), so equal plain texts
// give equal nonces and nothing else repeats one; decryption checks the tag and that the nonce
// is the one the plain text gives.
import crypto from 'node:crypto';
import { canonicalText, type License } from './license.js';
import type { SettingIssue } from '../setting/issues.js';

/** The marker of an encrypted value in setting.json. */
const ENC_PREFIX = 'enc:';

/** Members of setting.json that carry credentials; only these take `enc:` values. */
const SECRET_MEMBERS = new Set(['accessKey', 'secretKey', 'accessKeyId', 'secretAccessKey', 'apiKey', 'password']);

const NONCE = 12;
const TAG = 16;

export interface SecretKey { enc: Buffer; mac: Buffer }

export function secretKeyOf(license: License): SecretKey {
  const ikm = Buffer.from(`${canonicalText(license)}${license.signature.alg}:${license.signature.value}`);
  const okm = Buffer.from(crypto.hkdfSync('sha256', ikm, 'svc-edge encryptpassword', 'aes-256-gcm+hmac-sha256 v1', 64));
  return { enc: okm.subarray(0, 32), mac: okm.subarray(32) };
}

export function encryptSecret(key: SecretKey, plain: string): string {
  const data = Buffer.from(plain, 'utf8');
  const nonce = crypto.createHmac('sha256', key.mac).update(data).digest().subarray(0, NONCE);
  const cipher = crypto.createCipheriv('aes-256-gcm', key.enc, nonce);
  const body = Buffer.concat([cipher.update(data), cipher.final()]);
  return ENC_PREFIX + Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64url');
}

/** The plain text of an `enc:` value; throws when it was not made under this key. */
function decryptSecret(key: SecretKey, value: string): string {
  const raw = Buffer.from(value.slice(ENC_PREFIX.length), 'base64url');
  if (raw.length < NONCE + TAG) throw new Error('too short');
  const nonce = raw.subarray(0, NONCE);
  const decipher = crypto.createDecipheriv('aes-256-gcm', key.enc, nonce);
  decipher.setAuthTag(raw.subarray(raw.length - TAG));
  const data = Buffer.concat([decipher.update(raw.subarray(NONCE, raw.length - TAG)), decipher.final()]);
  const expected = crypto.createHmac('sha256', key.mac).update(data).digest().subarray(0, NONCE);
  if (!crypto.timingSafeEqual(expected, nonce)) throw new Error('nonce mismatch');
  return data.toString('utf8');
}

/** A credential as its user needs it: an `enc:` value decrypted under `key`, any other as is. */
export function revealSecret(key: SecretKey | undefined, value: string): string {
  if (!value.startsWith(ENC_PREFIX)) return value;
  if (key === undefined) throw new Error('an enc: credential needs a valid license to decrypt it');
  return decryptSecret(key, value);
}

/**
 * Every `enc:` value of a secret member, checked to decrypt under `key` (undefined: no usable
 * license on this node). The setting keeps the encrypted text, so `/get/setting` and the history
 * never show a secret; the parts that use a credential decrypt it with the same key.
 */
export function checkSecrets(setting: unknown, key: SecretKey | undefined): SettingIssue[] {
  const issues: SettingIssue[] = [];
  const walk = (v: unknown, at: string): void => {
    if (Array.isArray(v)) { v.forEach((x, i) => walk(x, `${at}[${i}]`)); return; }
    if (v === null || typeof v !== 'object') return;
    for (const [k, x] of Object.entries(v)) {
      const path = at === '' ? k : `${at}.${k}`;
      if (typeof x === 'string' && x.startsWith(ENC_PREFIX) && SECRET_MEMBERS.has(k)) {
        if (key === undefined) { issues.push({ path, message: 'is encrypted (enc:) but this node has no valid license to decrypt it' }); continue; }
        try {
          decryptSecret(key, x);
        } catch {
          issues.push({ path, message: 'is encrypted (enc:) but does not decrypt under this node\'s license (made for another license, or altered)' });
        }
      } else {
        walk(x, path);
      }
    }
  };
  walk(setting, '');
  return issues;
}
