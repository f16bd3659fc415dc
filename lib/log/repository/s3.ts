// Upload to an S3-API object store (cloudA-objstore, cloudD-object-storage-v1): one PUT Object
// per unit, signed with AWS Signature Version 4 (aws4fetch's signer) over the body's SHA-256, the
// body streamed from the spool file.
//
// Where the object goes:
// - cloudA with `domain` null: the vendor, virtual-hosted style
//   `https://<bucket>.s3.<region>.amazonaws.com/<path>`;
// - cloudA with `domain`: any S3-compatible store, path style `<domain>/<bucket>/<path>`
//   (`domain` is a URL base; without a scheme it is https);
// - cloudD: path style under `domain` when given, else the vendor's S3-compatibility endpoint
//   `https://<account>.compat.objectstorage.<region>.oraclecloud.com/<bucket>/<path>`.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { AwsV4Signer } from 'aws4fetch';
import { request } from 'undici';
import type { Credentials } from './imds.js';
import type { Spooled } from './unit.js';

export interface S3Endpoint {
  bucket: string;
  region: string;
  /** URL base of the store; undefined: the vendor's. */
  base: string | undefined;
}

const TIMEOUT_MS = 60_000;

const encodeKey = (key: string): string => key.split('/').map(encodeURIComponent).join('/');

export function objectUrl(e: S3Endpoint, key: string): string {
  if (e.base === undefined) return `https://${e.bucket}.s3.${e.region}.amazonaws.com/${encodeKey(key)}`;
  const base = /^[a-z][a-z0-9+.-]*:\/\//i.test(e.base) ? e.base : `https://${e.base}`;
  return `${base.replace(/\/+$/, '')}/${encodeURIComponent(e.bucket)}/${encodeKey(key)}`;
}

/**
 * Signed headers of a PUT of a body (hex SHA-256 `sha256`) at `url`. `more` adds signed headers
 * and fixes the time (`yyyymmddThhmmssZ`), as AWS's published examples do.
 */
export async function signPut(url: string, region: string, creds: Credentials, sha256: string, contentType: string,
  more: { headers?: Record<string, string>; datetime?: string } = {}): Promise<Record<string, string>> {
  const signer = new AwsV4Signer({
    method: 'PUT', url, service: 's3', region,
    headers: { 'content-type': contentType, 'x-amz-content-sha256': sha256, ...more.headers },
    ...(more.datetime === undefined ? {} : { datetime: more.datetime }),
    accessKeyId: creds.accessKeyId, secretAccessKey: creds.secretAccessKey,
    ...(creds.sessionToken === undefined ? {} : { sessionToken: creds.sessionToken }),
  });
  const signed = await signer.sign();
  return Object.fromEntries(signed.headers.entries());
}

export async function s3Put(e: S3Endpoint, key: string, creds: Credentials, body: Spooled, contentType: string): Promise<void> {
  const url = objectUrl(e, key);
  const headers = await signPut(url, e.region, creds, body.sha256, contentType);
  const r = await request(url, {
    method: 'PUT',
    headers: { ...headers, 'content-length': String(body.bytes) },
    body: fs.createReadStream(body.file),
    headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS,
  });
  await checkAnswer(url, r.statusCode, r.body);
}

/** A PUT of a body in memory (a setting package, a feed file), the whole call bounded by `timeoutMs`. */
export async function s3PutBuffer(e: S3Endpoint, key: string, creds: Credentials, body: Buffer, contentType: string, timeoutMs: number): Promise<void> {
  const url = objectUrl(e, key);
  const headers = await signPut(url, e.region, creds, createHash('sha256').update(body).digest('hex'), contentType);
  const r = await request(url, {
    method: 'PUT', headers: { ...headers, 'content-length': String(body.length) }, body,
    headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs),
  });
  await checkAnswer(url, r.statusCode, r.body);
}

/** Throws for a non-2xx answer, with the S3 error code when the body gives one. */
async function checkAnswer(url: string, status: number, body: { text(): Promise<string> }): Promise<void> {
  const text = await body.text();
  if (status < 200 || status >= 300) {
    const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
    throw new Error(`PUT ${url}: HTTP ${status}${code === undefined ? '' : ` ${code}`}`);
  }
}
