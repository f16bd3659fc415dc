// The transports of central management behind two small interfaces: a Feed delivers what the
// central server sends (a message v1, or a setting package for tgzPolling), a Sink carries a
// feedback message back. HTTP polling and POST are here; Kafka is kafka.ts. The features
// (setting-sync, purge-sync, heartbeat) only see these interfaces.
import { CronRunner, type Clock } from './clock.js';
import { call, postJson, type InfoLog } from './http.js';
import type { Origin } from './message.js';

export type FeedItem =
  | { kind: 'message'; text: string }
  | { kind: 'package'; url: string; body: Buffer; lastModified: string | undefined };

export interface Feed {
  /** `action.event` of the feedbacks of what this feed delivered. */
  readonly event: Origin;
  start(deliver: (item: FeedItem) => Promise<void>): void;
  stop(): Promise<void>;
}

export interface Sink { send(message: Record<string, unknown>): Promise<void> }

export interface PollingInfo { url: string; schedule: string; timeout: number }

/**
 * apiPolling / tgzPolling: a GET on each fire of the schedule with `If-Modified-Since` (the
 * Last-Modified of the last answer that brought something) and `X-SVC-Setting-Meta-Version`.
 * 200 delivers the body; 304 and 204 mean nothing new; any other answer is only logged.
 */
export class PollingFeed implements Feed {
  readonly event: Origin;
  private runner: CronRunner | undefined;
  private lastModified: string | undefined;

  constructor(
    private readonly type: 'apiPolling' | 'tgzPolling', private readonly info: PollingInfo, feature: string,
    private readonly o: { clock: Clock; metaVersion: () => string; log: InfoLog },
  ) {
    this.event = `/env/management/server/${type}/${feature}`;
  }

  start(deliver: (item: FeedItem) => Promise<void>): void {
    this.runner = new CronRunner(this.info.schedule, this.o.clock, () => this.poll(deliver));
    this.runner.start();
  }

  private async poll(deliver: (item: FeedItem) => Promise<void>): Promise<void> {
    const headers: Record<string, string> = { 'x-svc-setting-meta-version': this.o.metaVersion() };
    if (this.lastModified !== undefined) headers['if-modified-since'] = this.lastModified;
    const r = await call({ method: 'GET', url: this.info.url, timeoutMs: this.info.timeout * 1000, headers, purpose: `${this.type} feed` }, this.o.log);
    if (r.status !== 200) return;
    const lastModified = r.headers['last-modified'];
    if (lastModified !== undefined) this.lastModified = lastModified;
    await deliver(this.type === 'tgzPolling'
      ? { kind: 'package', url: this.info.url, body: r.body, lastModified }
      : { kind: 'message', text: r.body.toString('utf8') });
  }

  stop(): Promise<void> {
    this.runner?.stop();
    return Promise.resolve();
  }
}

/** `api` feedback: POST of the JSON message. */
export class ApiSink implements Sink {
  constructor(private readonly info: { url: string; timeout: number }, private readonly purpose: string, private readonly log: InfoLog) {}

  send(message: Record<string, unknown>): Promise<void> {
    return postJson(this.info.url, this.info.timeout * 1000, message, this.purpose, this.log);
  }
}
