// events.onSettingLoad.backup: the running setting as `setting_<yyyymmddThhmmssZ>.tgz` uploaded to
// `<path>/settings/<yyyy>/<mm>/` of an S3 bucket (httpCloudASig4 connection), then a setting.feed
// message pointing at it as `<path>/feed.json`, so a new node whose apiPolling feed reads that
// file bootstraps from it. After every setting change (`auto`) or on demand (GET
// /setting/deploy/backup), on the node named by `hostname` only (empty: every node). A failed
// upload is retried with back-off until it succeeds; a newer backup replaces one still retrying.
import os from 'node:os';
import { objectUrl, s3PutBuffer, type S3Endpoint } from '../../log/repository/s3.js';
import type { Credentials } from '../../log/repository/imds.js';
import type { Clock } from './clock.js';
import type { InfoLog } from './http.js';
import { BACKUP_RETRY, withRetry } from './retry.js';

export interface BackupOptions {
  hostname: string;
  auto: boolean;
  path: string;
  timeoutSec: number;
  endpoint: S3Endpoint;
  credentials: () => Promise<Credentials>;
  clock: Clock;
  log: InfoLog;
  /** The running setting's package. */
  pkg: () => Promise<Buffer>;
  /** The node's host name (os.hostname() unless a test says otherwise). */
  self?: string;
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** `20261124T195800Z` */
function compactIso(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}T${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}Z`;
}

export class SettingBackup {
  private generation = 0;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly prefix: string;

  constructor(private readonly o: BackupOptions) {
    this.prefix = o.path.replace(/^\/+|\/+$/g, '');
  }

  /** Whether this node is the one that backs up. */
  get active(): boolean {
    return this.o.hostname === '' || this.o.hostname === (this.o.self ?? os.hostname());
  }

  /** A lifecycle change: `backup` is the on-demand request, anything else a setting change. */
  onChange(source: string): void {
    if (source === 'backup' || this.o.auto) void this.trigger();
  }

  /** Queues a backup of the setting running now; resolves when it is stored or replaced by a newer one. */
  trigger(): Promise<void> {
    if (!this.active || this.closed) return Promise.resolve();
    const generation = ++this.generation;
    const pkg = this.o.pkg();
    // Marked handled: a superseded run never awaits it.
    pkg.catch(() => undefined);
    const at = this.o.clock.now();
    this.chain = this.chain.then(async () => {
      if (generation !== this.generation || this.closed) return;
      const body = await pkg;
      const key = (rest: string): string => (this.prefix === '' ? rest : `${this.prefix}/${rest}`);
      const file = `setting_${compactIso(at)}.tgz`;
      const d = new Date(at);
      const pkgKey = key(`settings/${d.getUTCFullYear()}/${pad(d.getUTCMonth() + 1)}/${file}`);
      const feed = {
        messageVer: '1', timestamp: new Date(at).toISOString(),
        action: { api: '/setting/upload' }, parameters: [{ url: objectUrl(this.o.endpoint, pkgKey) }],
      };
      const timeoutMs = this.o.timeoutSec * 1000;
      const ok = await withRetry('setting backup', async () => {
        const creds = await this.o.credentials();
        await s3PutBuffer(this.o.endpoint, pkgKey, creds, body, 'application/x-compressed', timeoutMs);
        await s3PutBuffer(this.o.endpoint, key('feed.json'), creds, Buffer.from(JSON.stringify(feed)), 'application/json', timeoutMs);
      }, { ...BACKUP_RETRY, clock: this.o.clock, log: this.o.log }, () => generation !== this.generation || this.closed);
      if (ok) this.o.log('central management: setting backed up', { bucket: this.o.endpoint.bucket, key: pkgKey, bytes: body.length });
    }).catch((err: Error) => this.o.log('central management: setting backup failed', { error: err.message }));
    return this.chain;
  }

  close(): void {
    this.closed = true;
  }
}
