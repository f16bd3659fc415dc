// features.purge in process: `workerCount` executors run a message's targets in parallel, never
// more at once; each target's result or failure text lands in the feedback.
import t from 'tap';
import { PurgeSync } from '../../lib/primary/central/purge-sync.js';
import type { Feed, FeedItem } from '../../lib/primary/central/transport.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { until } from '../helpers/wait.js';

class HandFeed implements Feed {
  readonly event = '/env/management/server/apiPolling/purge' as const;
  deliver: (item: FeedItem) => Promise<void> = async () => undefined;
  start(deliver: (item: FeedItem) => Promise<void>): void { this.deliver = deliver; }
  stop(): Promise<void> { return Promise.resolve(); }
}

const node = { productVer: '1.0.0', settingVer: 'x', licenseId: 'L', hostname: 'h', iplist: [] };

t.test('two executors run at most two purges at once and the feedback keeps the message order', async (t) => {
  const feed = new HandFeed();
  const sent: Record<string, any>[] = [];
  let running = 0;
  let most = 0;
  const releases: (() => void)[] = [];
  const sync = new PurgeSync({
    feed, executors: 2, productVer: '1.0.0', node: () => node, log: () => undefined, now: () => 0,
    retry: { clock: new ManualClock(0), log: () => undefined, attempts: 1, baseMs: 1, maxMs: 1 },
    sink: { send: async (m) => { sent.push(m); } },
    purge: async (what) => {
      const url = 'url' in what ? what.url : '';
      running++; most = Math.max(most, running);
      await new Promise<void>((r) => releases.push(r));
      running--;
      if (url.includes('bad')) throw new Error('unknown virtual host "bad"');
      return { count: 1, size: 10, time: 2 };
    },
  });
  sync.start();
  const urls = ['a.com/1', 'a.com/2', 'bad/3', 'a.com/4', 'a.com/5'];
  const done = feed.deliver({ kind: 'message', text: JSON.stringify({ action: { api: '/command/purge' }, parameters: urls.map((url) => ({ url })) }) });
  for (let i = 0; i < urls.length; i++) {
    await until(() => releases.length > i, `purge ${i + 1} started`);
    t.ok(running <= 2);
    releases[i]!();
  }
  await done;
  t.equal(most, 2);
  t.same(sent[0]!.parameters.map((p: { url: string }) => p.url), urls);
  t.same(sent[0]!.parameters[0].result, { version: '1.0.0', method: '/command/purge', status: 'OK', result: { count: 1, size: 10, time: 2 } });
  t.same(sent[0]!.parameters[2].result, { version: '1.0.0', method: '/command/purge', status: 'unknown virtual host "bad"', result: { count: 0, size: 0, time: 0 } });
});

t.test('a feed parameter with tag purges that cache tag, on its vhost when it names one', async (t) => {
  const feed = new HandFeed();
  const sent: Record<string, any>[] = [];
  const asked: unknown[] = [];
  const sync = new PurgeSync({
    feed, executors: 1, productVer: '1.0.0', node: () => node, log: () => undefined, now: () => 0,
    retry: { clock: new ManualClock(0), log: () => undefined, attempts: 1, baseMs: 1, maxMs: 1 },
    sink: { send: async (m) => { sent.push(m); } },
    purge: async (what) => { asked.push(what); return { count: 3, size: 30, time: 1 }; },
  });
  sync.start();
  await feed.deliver({ kind: 'message', text: JSON.stringify({ action: { api: '/command/purge' }, parameters: [{ tag: 'p1', vhost: 'a.com' }, { tag: 'p2' }, { tag: 7 }] }) });
  t.same(asked, [{ tag: 'p1', vhost: 'a.com' }, { tag: 'p2', vhost: undefined }]);
  t.same(sent[0]!.parameters[0].result.result, { count: 3, size: 30, time: 1 });
  t.match(sent[0]!.parameters[2].result.status, 'parameters[].tag must be a string');
});

t.test('a message that is not a purge is answered without purging anything', async (t) => {
  const feed = new HandFeed();
  const sent: Record<string, any>[] = [];
  let purged = 0;
  const sync = new PurgeSync({
    feed, executors: 1, productVer: '1.0.0', node: () => node, log: () => undefined, now: () => 0,
    retry: { clock: new ManualClock(0), log: () => undefined, attempts: 1, baseMs: 1, maxMs: 1 },
    sink: { send: async (m) => { sent.push(m); } },
    purge: async () => { purged++; return { count: 1, size: 1, time: 1 }; },
  });
  sync.start();
  await feed.deliver({ kind: 'message', text: JSON.stringify({ action: { api: '/setting/upload' }, parameters: [{ url: 'a.com/1' }] }) });
  await feed.deliver({ kind: 'message', text: 'not json' });
  t.equal(purged, 0);
  t.match(sent[0]!.parameters[0].result.status, 'action.api /setting/upload is not /command/purge');
  t.match(sent[1]!.parameters[0].result.status, /not JSON/);
});
