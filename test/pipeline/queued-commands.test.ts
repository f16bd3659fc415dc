// The worker's table of waiting asynchronous commands (pre-cache control): which command names a
// URL (the first in queue order, exact and wildcard targets alike), that a command's entries
// arrive in slices and leave by its id, that a host's reset stops only that host's entries, and
// that a command of 100,000 targets is taken in one pass (the quadratic build stalled the worker).
import t from 'tap';
import type { Target } from '../../lib/cache/commands/targets.js';
import { QueuedCommands, type PrectrlEntry } from '../../lib/pipeline/parts/queued-commands.js';

const exact = (prefix: string, vhost = 'a.com'): Target => ({ vhost, prefix, wildcard: false, text: prefix });
const entry = (target: Target, kind: PrectrlEntry['kind'], queuedAt: number): PrectrlEntry => ({ vhost: target.vhost, kind, target, queuedAt });
const none = (): void => undefined;

t.test('the first waiting command in queue order names a URL, whether its target is exact or a wildcard', async (t) => {
  const q = new QueuedCommands();
  const wild: Target = { vhost: 'a.com', prefix: '/d/', wildcard: true, text: '/d/*' };
  q.add(1, [entry(exact('/x'), 'expire', 1)], none);
  q.add(2, [entry(wild, 'purge', 2)], none);
  q.add(3, [entry(exact('/d/1'), 'hardpurge', 3)], none);
  t.equal(q.naming('a.com', '/x')?.kind, 'expire');
  t.equal(q.naming('a.com', '/d/1')?.kind, 'purge', 'the wildcard was queued before the exact target');
  t.equal(q.naming('a.com', '/d/2')?.kind, 'purge');
  t.equal(q.naming('a.com', '/y'), undefined);
  t.equal(q.naming('b.com', '/x'), undefined);
  q.drop(1);
  q.drop(2);
  q.add(4, [entry(wild, 'purge', 4)], none);
  t.equal(q.naming('a.com', '/d/1')?.kind, 'hardpurge', 'now the exact target comes first');
  t.equal(q.naming('a.com', '/x'), undefined, 'a command that ran names nothing');
});

t.test('a command taken in slices counts whole; dropping it, clearing, or a host reset leave the rest', async (t) => {
  const q = new QueuedCommands();
  q.add(1, [entry(exact('/a'), 'purge', 1), entry(exact('/a', 'b.com'), 'purge', 1)], none);
  q.add(1, [entry(exact('/b'), 'purge', 1)], none);
  q.add(2, [entry(exact('/c'), 'expire', 2), entry(exact('/c', 'b.com'), 'expire', 2)], none);
  t.equal(q.naming('a.com', '/b')?.kind, 'purge', 'the second slice joined the first');
  q.hostOff('a.com');
  t.equal(q.naming('a.com', '/a'), undefined, 'the host reset stops its entries');
  t.equal(q.naming('a.com', '/c'), undefined);
  t.equal(q.naming('b.com', '/a')?.kind, 'purge', 'other hosts keep theirs');
  q.add(3, [entry(exact('/a'), 'expire', 3)], none);
  t.equal(q.naming('a.com', '/a')?.kind, 'expire', 'a later command for the host counts');
  q.drop(1);
  t.equal(q.naming('b.com', '/a'), undefined);
  t.equal(q.naming('b.com', '/c')?.kind, 'expire');
  q.clear();
  t.equal(q.size, 0);
  t.equal(q.naming('a.com', '/a'), undefined);
});

t.test('the entries of a new slice are told, and 100,000 targets are taken at once', async (t) => {
  const q = new QueuedCommands();
  const big = Array.from({ length: 100_000 }, (_, i) => entry(exact(`/big/${i}`), 'purge', 7));
  let arrived = 0;
  const started = performance.now();
  q.add(1, big, () => { arrived++; });
  const took = performance.now() - started;
  t.equal(arrived, 100_000);
  t.ok(took < 10_000, `taken in one pass (${took.toFixed(0)} ms; the quadratic build took minutes)`);
  t.equal(q.naming('a.com', '/big/99999')?.kind, 'purge');
  arrived = 0;
  q.add(2, [entry(exact('/new'), 'expire', 8)], () => { arrived++; });
  t.equal(arrived, 1, 'only the new entries arrived');
  q.drop(1);
  q.drop(2);
  t.equal(q.size, 0);
});
