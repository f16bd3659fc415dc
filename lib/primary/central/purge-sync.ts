// features.purge: purge messages from the feed (`action.api=/command/purge`, `parameters[]
// {url}` or `{tag, vhost?}`: a cache tag on one host or on every host) run by `workerCount` parallel executors, each through the invalidation service the
// management API uses; then one feedback per message with each target's result.
import type { InfoLog } from './http.js';
import { feedback, MessageError, parseFeedMessage, type NodeInfo } from './message.js';
import { sendWithRetry, type Retry } from './retry.js';
import type { Feed, FeedItem, Sink } from './transport.js';

export interface PurgeOutcome { count: number; size: number; time: number }

export type PurgeParameter = { url: string } | { tag: string; vhost: string | undefined };

interface PurgeSyncOptions {
  feed: Feed;
  sink: Sink | undefined;
  executors: number;
  /** One purge target as `/command/purge?url=` (or `?tag=&vhost=`) takes it; rejects with the reason. */
  purge: (what: PurgeParameter) => Promise<PurgeOutcome>;
  productVer: string;
  node: () => NodeInfo;
  log: InfoLog;
  retry: Retry;
  now: () => number;
}

const METHOD = '/command/purge';

/** What one parameter names, or why it names nothing. */
function parameterOf(p: Record<string, unknown>): PurgeParameter | string {
  if (p.tag !== undefined) {
    if (typeof p.tag !== 'string') return 'parameters[].tag must be a string';
    if (p.vhost !== undefined && typeof p.vhost !== 'string') return 'parameters[].vhost must be a string';
    return { tag: p.tag, vhost: p.vhost };
  }
  if (typeof p.url !== 'string' || p.url === '') return 'parameters[].url missing';
  return { url: p.url };
}

/** At most `n` jobs at once, the others queued in order. */
class Executors {
  private running = 0;
  private readonly queue: (() => void)[] = [];

  constructor(private readonly n: number) {}

  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.running >= this.n) await new Promise<void>((r) => this.queue.push(r));
    this.running++;
    try {
      return await job();
    } finally {
      this.running--;
      this.queue.shift()?.();
    }
  }
}

export class PurgeSync {
  private readonly executors: Executors;

  constructor(private readonly o: PurgeSyncOptions) {
    this.executors = new Executors(Math.max(1, o.executors));
  }

  start(): void {
    this.o.feed.start((item) => this.receive(item));
  }

  stop(): Promise<void> {
    return this.o.feed.stop();
  }

  private async receive(item: FeedItem): Promise<void> {
    const fail = (status: string): Record<string, unknown> => ({ version: this.o.productVer, method: METHOD, status, result: { count: 0, size: 0, time: 0 } });
    if (item.kind !== 'message') return;
    let parameters: Record<string, unknown>[];
    let extra: Record<string, unknown> = {};
    try {
      const msg = parseFeedMessage(item.text);
      if ('userdata' in msg) extra = { userdata: msg.userdata };
      parameters = msg.action.api !== METHOD
        ? msg.parameters.map((p) => ({ ...p, result: fail(`action.api ${msg.action.api} is not ${METHOD}`) }))
        : await Promise.all(msg.parameters.map((p) => this.executors.run(async () => {
          const what = parameterOf(p);
          if (typeof what === 'string') return { ...p, result: fail(what) };
          try {
            const r = await this.o.purge(what);
            return { ...p, result: { version: this.o.productVer, method: METHOD, status: 'OK', result: r } };
          } catch (err) {
            return { ...p, result: fail((err as Error).message) };
          }
        })));
    } catch (err) {
      if (!(err instanceof MessageError)) throw err;
      parameters = [{ result: fail(err.message) }];
    }
    this.o.log('central management: purge message run', { targets: parameters.length, failed: parameters.filter((p) => (p.result as { status: string }).status !== 'OK').length });
    if (this.o.sink === undefined) return;
    const body = feedback(this.o.node(), this.o.now(), { ...extra, action: { api: METHOD, event: this.o.feed.event }, parameters });
    await sendWithRetry(this.o.sink, body, this.o.retry);
  }
}
