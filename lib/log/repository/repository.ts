// One backup repository of `env.log.repository.list[]` made ready to receive units: its upload
// cron, path template and the transport of its type. Endpoint members were checked against
// the schema of the type at validation (lib/setting/tagged.ts).
import path from 'node:path';
import { revealSecret, type SecretKey } from '../../license/secret-box.js';
import type { Setting } from '../../setting/types.js';
import { parseMinuteHour, type Cron } from '../cron.js';
import { exportFilter, type LineFilter } from './exports.js';
import { GcsClient, type AccountSource } from './gcs.js';
import { InstanceRole, type Credentials } from './imds.js';
import { pushLines } from './logagent.js';
import { s3Put, type S3Endpoint } from './s3.js';
import { countUnit, sendStatsd } from './statsd.js';
import { spoolUnit } from './unit.js';

type RepositorySetting = Setting['env']['log']['repository']['list'][number];

/** A unit to send: rolled files of one log. */
interface Unit {
  dir: string;
  files: string[];
  logtype: string;
  domain: string;
  /** The spool file the body is built in (removed by the caller). */
  spool: string;
}

export interface Repository {
  readonly name: string;
  readonly cron: Cron;
  readonly path: string;
  /** Sends a unit to the expanded `key`; resolves to the bytes sent. */
  send(unit: Unit, key: string): Promise<number>;
}

const IAMROLE = '#IAMROLE';

const contentType = (gzip: boolean): string => (gzip ? 'application/gzip' : 'text/plain; charset=utf-8');

/** The key of the node's license that `enc:` credentials decrypt under (undefined: no valid license). */
export type SecretKeySource = () => SecretKey | undefined;

/**
 * The key pair as the signer needs it: `enc:` values (/command/encryptpassword) decrypted under
 * the license's key, as central management does (central.ts), at each use so the plain text is
 * never kept; throws when one does not decrypt (the attempt fails and says why).
 */
function s3Credentials(keys: { accessKey: string; secretKey: string }, secretKey: SecretKeySource): Credentials {
  return { accessKeyId: revealSecret(secretKey(), keys.accessKey), secretAccessKey: revealSecret(secretKey(), keys.secretKey) };
}

function s3(ep: S3Endpoint, keys: { accessKey: string; secretKey: string }, gzip: boolean, secretKey: SecretKeySource): Repository['send'] {
  const role = keys.accessKey === IAMROLE || keys.secretKey === IAMROLE ? new InstanceRole() : undefined;
  return async (u, key) => {
    const creds = role === undefined ? s3Credentials(keys, secretKey) : await role.credentials();
    const body = await spoolUnit(u.dir, u.files, u.spool, gzip);
    await s3Put(ep, key, creds, body, contentType(gzip));
    return body.bytes;
  };
}

function exported(r: RepositorySetting, logtype: string): LineFilter | undefined {
  const ex = (r.endpoint as { exports: { enable: boolean; matchingList: string[] | null } }).exports;
  return exportFilter(logtype, ex);
}

function transport(r: RepositorySetting, setting: Setting, secretKey: SecretKeySource): Repository['send'] {
  const e = r.endpoint as Record<string, unknown>;
  const gzip = r.compression.enable;
  switch (r.type) {
    case 'cloudA-objstore':
      return s3({ bucket: e.bucket as string, region: e.region as string, base: (e.domain as string | null) ?? undefined },
        e as { accessKey: string; secretKey: string }, gzip, secretKey);
    case 'cloudD-object-storage-v1': {
      const region = e.region as string;
      const base = (e.domain as string | null | undefined) ?? `https://${e.account as string}.compat.objectstorage.${region}.oraclecloud.com`;
      return s3({ bucket: e.bucket as string, region, base }, e as { accessKey: string; secretKey: string }, gzip, secretKey);
    }
    case 'cloudC-storage': {
      const src: AccountSource = typeof e.credential === 'string'
        ? { file: path.resolve(setting.env.home, e.credential) }
        : { inline: { client_email: e.client_email as string, private_key: e.private_key as string, private_key_id: e.private_key_id as string | undefined } };
      const gcs = new GcsClient(src);
      return async (u, key) => {
        const body = await spoolUnit(u.dir, u.files, u.spool, gzip);
        await gcs.upload(key, body, contentType(gzip));
        return body.bytes;
      };
    }
    case 'statsd':
      return async (u) => sendStatsd(e.port as number, await countUnit(u.dir, u.files, u.logtype, u.domain, exported(r, u.logtype)));
    case 'logagent':
      return async (u, key) => {
        const body = await spoolUnit(u.dir, u.files, u.spool, gzip, exported(r, u.logtype));
        // Every line filtered out: nothing to push, and the files count as shipped.
        if (body.kept === 0) return 0;
        await pushLines(e.url as string, key, body, gzip);
        return body.bytes;
      };
    default:
      throw new Error(`repository type ${r.type as string} has no transport`);
  }
}

export function repositoryOf(r: RepositorySetting, setting: Setting, secretKey: SecretKeySource = () => undefined): Repository {
  return { name: r.name, cron: parseMinuteHour(r.rolling), path: r.path, send: transport(r, setting, secretKey) };
}
