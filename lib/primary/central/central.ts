// Central management (document 2, env.management.server): builds the features and the backup
// event from the setting at start (env: fixed until the next restart) and runs them in the
// primary, off the request path. A central server that is down costs its own timeouts only.
import os from 'node:os';
import type { SettingLifecycle } from '../../lifecycle/index.js';
import { md5 } from '../../lifecycle/package.js';
import { InstanceRole, type Credentials } from '../../log/repository/imds.js';
import { revealSecret, type SecretKey } from '../../license/secret-box.js';
import type { Setting } from '../../setting/types.js';
import { SettingBackup } from './backup.js';
import { realClock, type Clock } from './clock.js';
import { Heartbeat } from './heartbeat.js';
import type { InfoLog } from './http.js';
import { KafkaFeed, KafkaSink, type KafkaConnection } from './kafka.js';
import { ipList, type NodeInfo } from './message.js';
import { NodeList, type NodeListOptions } from './nodelist.js';
import { PurgeSync, type PurgeOutcome, type PurgeParameter } from './purge-sync.js';
import { FEEDBACK_RETRY, type Retry } from './retry.js';
import { SettingSync } from './setting-sync.js';
import { ApiSink, PollingFeed, type Feed, type PollingInfo, type Sink } from './transport.js';

type Server = Setting['env']['management']['server'];
type Info = Record<string, unknown>;

interface CentralDeps {
  server: Server;
  lifecycle: SettingLifecycle;
  /** One `/command/purge` target through the API's invalidation service. */
  purge: (what: PurgeParameter) => Promise<PurgeOutcome>;
  origins: Pick<NodeListOptions, 'configured' | 'apply'>;
  licenseId: () => string;
  /** The license's key of `enc:` credentials. */
  secretKey: () => SecretKey | undefined;
  productVer: string;
  log: InfoLog;
  clock?: Clock;
}

const IAMROLE = '#IAMROLE';

export class Central {
  private readonly clock: Clock;
  private readonly retry: Retry;
  private readonly stops: (() => unknown)[] = [];
  private readonly starts: (() => void)[] = [];
  private readonly connections: Map<string, { type: string; info: Info }>;
  private role: InstanceRole | undefined;

  constructor(private readonly d: CentralDeps) {
    this.clock = d.clock ?? realClock;
    this.retry = { ...FEEDBACK_RETRY, clock: this.clock, log: d.log };
    this.connections = new Map((d.server.connection ?? []).map((c) => [c.name, { type: c.type, info: c.info }]));
    if (d.server.enable) this.build();
  }

  start(): void {
    for (const s of this.starts) s();
  }

  async close(): Promise<void> {
    for (const s of this.stops) await s();
  }

  private node = (): NodeInfo => {
    const raw = this.d.lifecycle.runningRaw();
    return {
      productVer: this.d.productVer, settingVer: raw === undefined ? '' : md5(raw),
      licenseId: this.d.licenseId(), hostname: os.hostname(), iplist: ipList(),
    };
  };

  private kafka(info: Info): KafkaConnection {
    return this.connections.get(info.connect as string)!.info as unknown as KafkaConnection;
  }

  private credentials(info: Info): () => Promise<Credentials> {
    if (info.accessKeyId === IAMROLE || info.secretAccessKey === IAMROLE) {
      this.role ??= new InstanceRole();
      const role = this.role;
      return () => role.credentials();
    }
    // Decrypted at each use: the plain text is never kept.
    return async () => ({
      accessKeyId: revealSecret(this.d.secretKey(), info.accessKeyId as string),
      secretAccessKey: revealSecret(this.d.secretKey(), info.secretAccessKey as string),
    });
  }

  private feed(f: { type: string; info: Info }, feature: string): Feed {
    if (f.type === 'kafkaSub') return new KafkaFeed(this.kafka(f.info), f.info as never, feature, this.d.log);
    return new PollingFeed(f.type as 'apiPolling' | 'tgzPolling', f.info as unknown as PollingInfo, feature, {
      clock: this.clock, log: this.d.log, metaVersion: () => String(this.d.lifecycle.running().meta.version),
    });
  }

  private sink(f: { type: string; info: Info } | undefined, purpose: string): Sink | undefined {
    if (f === undefined) return undefined;
    if (f.type === 'kafkaPub') {
      const k = new KafkaSink(this.kafka(f.info), f.info.topic as string, this.d.log);
      this.stops.push(() => k.close());
      return k;
    }
    return new ApiSink(f.info as { url: string; timeout: number }, purpose, this.d.log);
  }

  /** Only what semantic.ts lets through reaches here (cloudCdoc and cloudB are refused there). */
  private build(): void {
    const f = this.d.server.features;
    const common = { productVer: this.d.productVer, node: this.node, log: this.d.log, retry: this.retry, now: () => this.clock.now() };
    if (f.setting.enable && f.setting.feed !== undefined) {
      const feed = this.feed(f.setting.feed, 'setting');
      const lc = this.d.lifecycle;
      const sync = new SettingSync({
        ...common, feed, sink: this.sink(f.setting.feedback, 'setting feedback'), uploadSetting: f.setting.feedback?.uploadSetting ?? true,
        downloadTimeout: (f.setting.feed.info.timeout as number | undefined) ?? 10,
        target: {
          apply: async (body, source) => { await lc.applyPackage(body, source); return String(lc.running().meta.version); },
          // No linked repository exists in this build: the working copy is setting.json itself.
          checkout: async () => { await lc.deployLocal(); return String(lc.running().meta.version); },
          loaded: () => { const raw = lc.runningRaw(); return raw === undefined ? undefined : JSON.parse(raw) as unknown; },
        },
      });
      lc.onChange((source) => sync.changedElsewhere(source));
      this.starts.push(() => sync.start());
      this.stops.push(() => sync.stop());
    }
    if (f.purge.enable && f.purge.feed !== undefined) {
      const sync = new PurgeSync({
        ...common, feed: this.feed(f.purge.feed, 'purge'), sink: this.sink(f.purge.feedback, 'purge feedback'),
        executors: f.purge.workerCount === 0 ? os.availableParallelism() : f.purge.workerCount, purge: this.d.purge,
      });
      this.starts.push(() => sync.start());
      this.stops.push(() => sync.stop());
    }
    const hb = f.heartbeat.feedback;
    if (f.heartbeat.enable && hb !== undefined) {
      const sink = hb.type === 'kafkaPub' ? this.sink(hb, 'heartbeat')! : new ApiSink(hb.info as { url: string; timeout: number }, 'heartbeat', this.d.log);
      const beat = new Heartbeat(hb.info.schedule as string, this.clock, sink, this.node, this.d.log);
      this.starts.push(() => beat.start());
      this.stops.push(() => beat.stop());
    }
    this.buildNodeList();
    this.buildBackup();
  }

  private buildNodeList(): void {
    const n = this.d.server.features.nodelist;
    if (!n.enable || n.feed === undefined) return;
    const conn = this.connections.get(n.feed.info.connect as string)!.info;
    const kinds = (n.feedback?.type ?? '').split(';');
    const info = n.feedback?.info;
    const list = new NodeList({
      ...this.d.origins, schedule: n.feed.info.schedule as string, clock: this.clock, tag: n.feed.info.tag as string,
      conn: { credentials: this.credentials(conn), region: conn.region as string, endpoint: conn.endpoint as string | undefined },
      hosts: kinds.includes('setting') ? (info?.hosting ?? []).map((h) => h.name) : [],
      sink: kinds.includes('api') && info?.url !== undefined ? new ApiSink({ url: info.url, timeout: info.timeout }, 'nodelist feedback', this.d.log) : undefined,
      node: this.node, log: this.d.log, retry: this.retry,
    });
    this.starts.push(() => { void list.run(); list.start(); });
    this.stops.push(() => list.stop());
  }

  private buildBackup(): void {
    const b = this.d.server.events.onSettingLoad.backup;
    if (!b.enable || b.connect === undefined || b.path === undefined) return;
    const conn = this.connections.get(b.connect)!.info;
    const backup = new SettingBackup({
      hostname: b.hostname, auto: b.auto, path: b.path, timeoutSec: b.timeout, clock: this.clock, log: this.d.log,
      endpoint: { bucket: conn.bucket as string, region: conn.region as string, base: conn.endpoint as string | undefined },
      credentials: this.credentials(conn),
      pkg: () => this.d.lifecycle.runningPackage(),
    });
    this.d.lifecycle.onChange((source) => backup.onChange(source));
    this.stops.push(() => backup.close());
  }
}
