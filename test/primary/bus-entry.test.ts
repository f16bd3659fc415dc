// The bounds of an invalidation-bus entry, in-process: a large invalidation is appended as
// several entries, each within both bounds and in target order; an entry read from the bus over
// either bound is refused, before its targets are parsed when it is over the byte bound.
import t from 'tap';
import { entrySlices, MAX_ENTRY_BYTES, MAX_ENTRY_TARGETS, parseEntry, type BusEntry } from '../../lib/primary/fleet/bus-entry.js';

const targetsOf = (f: string[]): BusEntry['targets'] => JSON.parse(f[f.indexOf('targets') + 1]!) as BusEntry['targets'];

t.test('a large invalidation is cut into entries within both bounds, every target once and in order', async (t) => {
  const targets = Array.from({ length: 2500 }, (_, i) => ({ vhost: 'a.com', text: `/x/${i}` }));
  const long = { vhost: 'a.com', text: `/${'é'.repeat(60_000)}` }; // 120 KB of UTF-8: two fit beside the last 500 short ones, the third goes on
  const tooLarge: string[] = [];
  const huge = { vhost: 'a.com', text: `/${'y'.repeat(MAX_ENTRY_BYTES)}` };
  const slices = [...entrySlices({ kind: 'expireafter', sec: 60, node: 'n1', targets: [...targets, long, long, long, huge] }, (x) => tooLarge.push(x.text))];
  const carried = slices.map(targetsOf);
  t.same(carried.map((c) => c.length), [1000, 1000, 502, 1], 'by count, then by bytes');
  t.ok(slices.every((f) => Buffer.byteLength(f[f.indexOf('targets') + 1]!) <= MAX_ENTRY_BYTES), 'each within the byte bound');
  t.same(carried.flat(), [...targets, long, long, long], 'every target once, in order');
  t.same(tooLarge, [huge.text], 'a target over the bound alone is handed back, not carried');
  t.ok(slices.every((f) => { const e = parseEntry(f) as BusEntry; return e.kind === 'expireafter' && e.sec === 60 && e.node === 'n1'; }), 'each entry reads back whole');
});

t.test('a tag target crosses the bus as a tag, and one whose tag is no string is not ours', async (t) => {
  const [fields] = [...entrySlices({ kind: 'purge', node: 'n1', targets: [{ vhost: 'a.com', text: 'tag:p1', tag: 'p1' }, { vhost: 'a.com', text: '/u' }] }, () => undefined)];
  t.same((parseEntry(fields!) as BusEntry).targets, [{ vhost: 'a.com', text: 'tag:p1', tag: 'p1' }, { vhost: 'a.com', text: '/u' }]);
  t.equal(parseEntry(['kind', 'purge', 'targets', JSON.stringify([{ vhost: 'a', text: 't', tag: 7 }]), 'node', 'x']), undefined);
});

t.test('an entry read from the bus over either bound is refused', async (t) => {
  const many = JSON.stringify(Array.from({ length: MAX_ENTRY_TARGETS + 1 }, () => ({ vhost: 'a', text: '/' })));
  t.same(parseEntry(['kind', 'purge', 'targets', many, 'node', 'x']), { refused: `${MAX_ENTRY_TARGETS + 1} targets, over ${MAX_ENTRY_TARGETS}`, node: 'x' });
  const heavy = `[${'{"vhost":"a","text":"/"},'.repeat(20_000)}{]`; // not even JSON: refused before any parse
  t.match(parseEntry(['kind', 'purge', 'targets', heavy, 'node', 'x']), { refused: /bytes, over 262144$/, node: 'x' });
  t.equal(parseEntry(['kind', 'purge', 'targets', '[', 'node', 'x']), undefined, 'a small malformed entry is not one of ours');
});
