// Upload to cloudC-storage: the Cloud Storage JSON API's simple upload
// (`POST <base>/upload/storage/v1/b/<bucket>/o?uploadType=media&name=<object>`), authorised by an
// OAuth access token obtained with a service-account JWT (RS256, signed here with node:crypto)
// from the key's `token_uri`. The bucket is the first segment of the expanded `path` (document 3
// gives this type no bucket member). `<base>` is https://storage.googleapis.com unless
// STORAGE_EMULATOR_HOST names another (the variable Google's client libraries read).
import { sign } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { request } from 'undici';
import type { Spooled } from './unit.js';

interface ServiceAccount {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri?: string;
}

const DEFAULT_TOKEN_URI = 'https://oauth2.googleapis.com/token';
const SCOPE = 'https://www.googleapis.com/auth/devstorage.read_write';
const TIMEOUT_MS = 60_000;
const REFRESH_BEFORE_MS = 5 * 60_000;

const b64url = (b: Buffer | string): string => Buffer.from(b).toString('base64url');

/** The signed assertion of the JWT-bearer grant (RFC 7523) for `sa`, issued at `nowSec`. */
function serviceAccountJwt(sa: ServiceAccount, nowSec: number): string {
  const header = { alg: 'RS256', typ: 'JWT', ...(sa.private_key_id ? { kid: sa.private_key_id } : {}) };
  const claims = { iss: sa.client_email, scope: SCOPE, aud: sa.token_uri ?? DEFAULT_TOKEN_URI, iat: nowSec, exp: nowSec + 3600 };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  return `${input}.${b64url(sign('sha256', Buffer.from(input), sa.private_key))}`;
}

/** Where the service account comes from: the endpoint's members, or its `credential` file. */
export type AccountSource = { inline: ServiceAccount } | { file: string };

async function accountOf(src: AccountSource): Promise<ServiceAccount> {
  if ('inline' in src) return src.inline;
  const sa = JSON.parse(await fsp.readFile(src.file, 'utf8')) as Partial<ServiceAccount>;
  if (typeof sa.client_email !== 'string' || typeof sa.private_key !== 'string') {
    throw new Error(`credential file ${src.file}: client_email and private_key are required`);
  }
  return sa as ServiceAccount;
}

export class GcsClient {
  private token: { value: string; until: number } | undefined;

  constructor(private readonly src: AccountSource, private readonly now: () => number = Date.now) {}

  private async accessToken(): Promise<string> {
    if (this.token !== undefined && this.now() < this.token.until) return this.token.value;
    const sa = await accountOf(this.src);
    const assertion = serviceAccountJwt(sa, Math.floor(this.now() / 1000));
    const r = await request(sa.token_uri ?? DEFAULT_TOKEN_URI, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
      headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS,
    });
    const text = await r.body.text();
    if (r.statusCode !== 200) throw new Error(`token request: HTTP ${r.statusCode} ${text.slice(0, 200)}`);
    const a = JSON.parse(text) as { access_token?: string; expires_in?: number };
    if (!a.access_token) throw new Error('token request: no access_token in the answer');
    this.token = { value: a.access_token, until: this.now() + (a.expires_in ?? 3600) * 1000 - REFRESH_BEFORE_MS };
    return a.access_token;
  }

  /** Uploads the unit at `path` (`<bucket>/<object name>`). */
  async upload(path: string, body: Spooled, contentType: string): Promise<void> {
    const cut = path.indexOf('/');
    if (cut <= 0 || cut === path.length - 1) throw new Error(`path "${path}" must be <bucket>/<object>`);
    const bucket = path.slice(0, cut);
    const name = path.slice(cut + 1);
    const host = process.env.STORAGE_EMULATOR_HOST ?? 'https://storage.googleapis.com';
    const base = /^[a-z]+:\/\//i.test(host) ? host : `http://${host}`;
    const url = `${base.replace(/\/+$/, '')}/upload/storage/v1/b/${encodeURIComponent(bucket)}/o?uploadType=media&name=${encodeURIComponent(name)}`;
    const token = await this.accessToken();
    const r = await request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType, 'content-length': String(body.bytes) },
      body: fs.createReadStream(body.file),
      headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS,
    });
    const text = await r.body.text();
    if (r.statusCode === 401) this.token = undefined;
    if (r.statusCode < 200 || r.statusCode >= 300) throw new Error(`upload to gs://${bucket}: HTTP ${r.statusCode} ${text.slice(0, 200)}`);
  }
}
