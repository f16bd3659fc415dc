// features.setting: what a feed brings is applied as an upload (a message v1 naming package URLs,
// or for tgzPolling the package itself), then a feedback message reports each outcome. At the
// start a feedback with `/_sys_/bootup` reports the loaded setting; setting changes made through
// the management API are reported too, as `/_api_/<api>`, and a reload by SIGHUP (the command
// line's `systemctl reload` or `kill -HUP`) as `/_sys_/cli/reload` (document 2, Events).
import { call, type InfoLog } from './http.js';
import { feedback, MessageError, parseFeedMessage, type FeedMessage, type NodeInfo, type Origin } from './message.js';
import type { Feed, FeedItem, Sink } from './transport.js';
import { sendWithRetry, type Retry } from './retry.js';

interface SettingTarget {
  /** Applies a package (tgz or setting.json) as an upload; resolves to the applied meta.version. */
  apply(body: Buffer, source: string): Promise<string>;
  /** The notification of a linked repository (`/setting/deploy/checkout`). */
  checkout(source: string): Promise<string>;
  /** The loaded setting.json (for `uploadSetting`). */
  loaded(): unknown;
}

interface SettingSyncOptions {
  feed: Feed;
  sink: Sink | undefined;
  uploadSetting: boolean;
  /** Timeout of a package download (the feed's, seconds). */
  downloadTimeout: number;
  productVer: string;
  node: () => NodeInfo;
  target: SettingTarget;
  log: InfoLog;
  retry: Retry;
  now: () => number;
}

type Result = Record<string, unknown>;
interface Outcome { api: string; from: FeedMessage | undefined; parameters: Result[] }

export class SettingSync {
  /** The source of the commits the feed makes (info log). */
  private readonly source: string;
  /** While a feed item is handled its commits are reported by its own feedback, not as `/_api_/`. */
  private handling = 0;

  constructor(private readonly o: SettingSyncOptions) {
    this.source = o.feed.event.replace('/env/management/server/', '');
  }

  start(): void {
    const bootup = '/_sys_/bootup';
    void this.report(bootup, bootup, undefined, [{ result: this.result(bootup, 'ok', null, this.metaVersion()) }]);
    this.o.feed.start((item) => this.receive(item));
  }

  stop(): Promise<void> {
    return this.o.feed.stop();
  }

  /** A setting change that did not come from the feed (the management API, SIGHUP, restore). */
  changedElsewhere(source: string): void {
    if (this.handling > 0 || source === 'backup') return;
    if (source === 'sighup') {
      const api = '/setting/deploy/local';
      void this.report('/_sys_/cli/reload', api, undefined, [{ result: this.result(api, 'ok', null, this.metaVersion()) }]);
      return;
    }
    const name = source.startsWith('restore') ? 'restore' : source;
    const api = `/setting/${name}`;
    void this.report(`/_api_/setting/${name}`, api, undefined, [{ result: this.result(api, 'ok', null, this.metaVersion()) }]);
  }

  private metaVersion(): string {
    const loaded = this.o.target.loaded() as { meta?: { version?: unknown } } | undefined;
    return String(loaded?.meta?.version ?? '1');
  }

  private async receive(item: FeedItem): Promise<void> {
    let outcome: Outcome;
    this.handling++;
    try {
      outcome = await this.handle(item);
    } finally {
      this.handling--;
    }
    await this.report(this.o.feed.event, outcome.api, outcome.from, outcome.parameters);
  }

  private async handle(item: FeedItem): Promise<Outcome> {
    const source = this.source;
    if (item.kind === 'package') {
      const result = await this.applyOne(item.body, item.lastModified, '/setting/upload', source);
      return { api: '/setting/upload', from: undefined, parameters: [{ url: item.url, result }] };
    }
    let msg: FeedMessage;
    try {
      msg = parseFeedMessage(item.text);
    } catch (err) {
      if (!(err instanceof MessageError)) throw err;
      return { api: '', from: undefined, parameters: [{ result: this.result('', err.message, null, this.metaVersion()) }] };
    }
    const api = msg.action.api;
    const parameters: Result[] = [];
    if (api === '/setting/upload') {
      for (const p of msg.parameters) parameters.push({ ...p, result: await this.download(p.url, source) });
    } else if (api === '/setting/deploy/checkout') {
      parameters.push({ result: await this.run(() => this.o.target.checkout(source), api, null) });
    } else {
      for (const p of msg.parameters) parameters.push({ ...p, result: this.result(api, `action.api ${api} is not a setting action`, null, this.metaVersion()) });
    }
    return { api, from: msg, parameters };
  }

  private async download(url: unknown, source: string): Promise<Result> {
    const method = '/setting/upload';
    if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) return this.result(method, 'parameters[].url must be an http(s) URL', null, this.metaVersion());
    let body: Buffer;
    let lastModified: string | null;
    try {
      const r = await call({ method: 'GET', url, timeoutMs: this.o.downloadTimeout * 1000, purpose: 'setting package download' }, this.o.log);
      if (r.status !== 200) return this.result(method, `package download: HTTP ${r.status}`, null, this.metaVersion());
      body = r.body;
      lastModified = r.headers['last-modified'] ?? null;
    } catch (err) {
      return this.result(method, (err as Error).message, null, this.metaVersion());
    }
    return this.applyOne(body, lastModified ?? undefined, method, source);
  }

  private applyOne(body: Buffer, lastModified: string | undefined, method: string, source: string): Promise<Result> {
    return this.run(() => this.o.target.apply(body, source), method, lastModified ?? null);
  }

  private async run(work: () => Promise<string>, method: string, lastModified: string | null): Promise<Result> {
    try {
      return this.result(method, 'ok', lastModified, await work());
    } catch (err) {
      return this.result(method, (err as Error).message, lastModified, this.metaVersion());
    }
  }

  /** `version` is the product's (document 2 names two members `version`: the applied meta.version is `metaVersion`). */
  private result(method: string, status: string, lastModified: string | null, metaVersion: string): Result {
    return { version: this.o.productVer, method, status, lastModified, metaVersion };
  }

  /** `from`: the feed message whose userdata is copied. */
  private async report(event: Origin, api: string, from: FeedMessage | undefined, parameters: Result[]): Promise<void> {
    if (this.o.sink === undefined) return;
    const body = feedback(this.o.node(), this.o.now(), {
      ...(from !== undefined && 'userdata' in from ? { userdata: from.userdata } : {}),
      action: { api, event },
      parameters,
      setting: this.o.uploadSetting ? this.o.target.loaded() ?? null : null,
    });
    await sendWithRetry(this.o.sink, body, this.o.retry);
  }
}
