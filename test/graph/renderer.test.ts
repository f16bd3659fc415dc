// The render queue in-process (one thread, one graph at a time: maxThreads 1): callers beyond the queue's
// bound are told to come back, the others all get their PNG.
import t from 'tap';
import { GraphRenderer } from '../../lib/graph/renderer.js';
import { isCoded } from '../../lib/errors/codes.js';
import { LINE_COLORS } from '../../lib/graph/draw.js';
import { pngSize } from '../helpers/png.js';

const job = (i: number) => ({
  width: 580, height: 203, type: 'day' as const, title: `graph ${i}`, unit: '/s' as const, start: 1_795_000_000, step: 300,
  lines: [{ label: 'Main', color: LINE_COLORS[0], values: new Float64Array(576).map((_v, k) => (k * i) % 17) }],
});

t.test('graphs asked together are all drawn, none refused', async (t) => {
  const r = new GraphRenderer();
  t.teardown(() => r.close());
  const pngs = await Promise.all(Array.from({ length: 8 }, (_v, i) => r.render(job(i))));
  for (const p of pngs) t.same(pngSize(p), { width: 580, height: 203 });
});

t.test('past 64 waiting graphs a caller gets GRAPH_BUSY, and the queue goes on', async (t) => {
  const r = new GraphRenderer();
  t.teardown(() => r.close());
  const results = await Promise.allSettled(Array.from({ length: 80 }, (_v, i) => r.render(job(i))));
  const busy = results.filter((x) => x.status === 'rejected');
  t.ok(busy.length > 0 && busy.length <= 80 - 64, `${busy.length} refused`);
  t.ok(busy.every((x) => x.status === 'rejected' && isCoded(x.reason, 'GRAPH_BUSY')));
  t.equal(results.filter((x) => x.status === 'fulfilled').length, 80 - busy.length, 'every other caller got its PNG');
  t.same(pngSize(await r.render(job(1))), { width: 580, height: 203 }, 'a later caller is served');
});
