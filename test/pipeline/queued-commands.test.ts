// The worker's table of waiting asynchronous commands (pre-cache control): which command names a
// URL (the first in queue order, exact and wildcard targets alike), which are new, and that a
// list of 100,000 targets is taken in one pass (the quadratic build stalled the worker).
import t from 'tap';
import type { Target } from '../../lib/cache/commands/targets.js';
import { QueuedCommands, type PrectrlEntry } from '../../lib/pipeline/parts/queued-commands.js';

const exact = (prefix: string): Target => ({ vhost: 'a.com', prefix, wildcard: false, text: prefix });
const entry = (target: Target, kind: PrectrlEntry['kind'], queuedAt: number): PrectrlEntry => ({ vhost: 'a.com', kind, target, queuedAt });

t.test('the first waiting command in queue order names a URL, whether its target is exact or a wildcard', async (t) => {
  const q = new QueuedCommands();
  const wild: Target = { vhost: 'a.com', prefix: '/d/', wildcard: true, text: '/d/*' };
  q.set([entry(exact('/x'), 'expire', 1), entry(wild, 'purge', 2), entry(exact('/d/1'), 'hardpurge', 3)], () => undefined);
  t.equal(q.naming('a.com', '/x')?.kind, 'expire');
  t.equal(q.naming('a.com', '/d/1')?.kind, 'purge', 'the wildcard was queued before the exact target');
  t.equal(q.naming('a.com', '/d/2')?.kind, 'purge');
  t.equal(q.naming('a.com', '/y'), undefined);
  t.equal(q.naming('b.com', '/x'), undefined);
  q.set([entry(exact('/d/1'), 'hardpurge', 3), entry(wild, 'purge', 4)], () => undefined);
  t.equal(q.naming('a.com', '/d/1')?.kind, 'hardpurge', 'now the exact target comes first');
});

t.test('a new list tells only the commands not heard of before, and 100,000 targets are taken at once', async (t) => {
  const q = new QueuedCommands();
  const big = Array.from({ length: 100_000 }, (_, i) => entry(exact(`/big/${i}`), 'purge', 7));
  let arrived = 0;
  const started = performance.now();
  q.set(big, () => { arrived++; });
  const took = performance.now() - started;
  t.equal(arrived, 100_000);
  t.ok(took < 10_000, `taken in one pass (${took.toFixed(0)} ms; the quadratic build took minutes)`);
  t.equal(q.naming('a.com', '/big/99999')?.kind, 'purge');
  arrived = 0;
  q.set([...big, entry(exact('/new'), 'expire', 8)], () => { arrived++; });
  t.equal(arrived, 1, 'only the new command arrived');
  q.set([], () => undefined);
  t.equal(q.size, 0);
});
