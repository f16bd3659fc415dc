// The graph history in-process, on a clock the test moves: per-step means, weighted ratios,
// the sum of all hosts, Peaks of the coarser archives, the round robin and a reopen.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { cacheResultIndex, fieldIndex, STRIDE, type CounterField } from '../../lib/record/counter-layout.js';
import { GraphHistory, type Second } from '../../lib/graph/history.js';
import { GLOBAL_RESOURCES, VHOST_LAYOUT, VHOST_RESOURCES } from '../../lib/graph/resources.js';
import { ALL_HOSTS_SCOPE, NODE_SCOPE, RrdStore } from '../../lib/graph/rrd.js';
import { ARCHIVES, GRAPH_TYPES } from '../../lib/graph/types.js';

const T0 = 1_795_000_000 - (1_795_000_000 % 86_400); // a UTC midnight: every archive's step starts here
const vres = (n: string) => VHOST_RESOURCES.find((r) => r.name === n)!;
const gres = (n: string) => GLOBAL_RESOURCES.find((r) => r.name === n)!;

type Fill = Partial<Record<CounterField | 'TCP_HIT' | 'TCP_MISS', number>>;

function row(fill: Fill = {}): Float64Array {
  const r = new Float64Array(STRIDE);
  for (const [k, v] of Object.entries(fill)) r[k === 'TCP_HIT' || k === 'TCP_MISS' ? cacheResultIndex(k) : fieldIndex(k as CounterField)] = v;
  return r;
}

function harness(t: Test, file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'graph-')), 'h.sqlite')) {
  let now = T0 * 1000;
  const store = RrdStore.open(file, () => undefined);
  const history = new GraphHistory(store, () => now);
  const h = {
    file, history, store,
    at(seconds: number) { now = (T0 + seconds) * 1000; },
    /** `n` seconds, each with these rows for hosts a and b, the clock moving one second each. */
    run(n: number, a: Fill, b: Fill = {}, system: Record<string, unknown> = { CPU: { Kernel: 500, User: 1500 } }) {
      for (let i = 0; i < n; i++) {
        const rows: Record<string, Float64Array> = { a: row(a), b: row(b) };
        const s: Second = { host: { System: system, VirtualHost: [{ Name: 'a' }, { Name: 'b' }] }, nodeRow: row(), hostRow: (name) => rows[name]! };
        history.sample(s);
        now += 1000;
      }
    },
  };
  t.teardown(() => { try { history.close(); } catch { /* closed by the test */ } });
  return h;
}

/** The values of the steps that have one (value and the step's start, relative to T0). */
function points(values: Float64Array, start: number, step: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  values.forEach((v, k) => { if (!Number.isNaN(v)) out.push([start + k * step - T0, Math.round(v * 1000) / 1000]); });
  return out;
}

t.test('a 5-minute step is the mean of its seconds, and the open step shows at once', async (t) => {
  const h = harness(t);
  h.run(100, { requests: 2 });
  let s = h.history.series('a', vres('client_http_res'), GRAPH_TYPES.day);
  t.same(points(s.lines[1]!, s.start, s.step), [[0, 2]], 'the open step, from memory');
  h.run(200, {});
  h.run(1, {}); // the first second of the next step closes the first one
  s = h.history.series('a', vres('client_http_res'), GRAPH_TYPES.day);
  t.same(points(s.lines[1]!, s.start, s.step), [[0, 0.667], [300, 0]], 'stored: 200 requests over 300 s');
});

t.test('ratios and times are weighted by what they count, per host and over the hosts', async (t) => {
  const h = harness(t);
  h.run(1, { requests: 1, TCP_HIT: 1, firstByteMs: 10, responses2xx: 1 }, { requests: 2, TCP_MISS: 2, responses2xx: 2, firstByteMs: 100 });
  h.run(1, { requests: 3, TCP_MISS: 3, firstByteMs: 90, responses2xx: 3 }, {});
  const ratio = h.history.series('a', vres('hitratio'), GRAPH_TYPES.day);
  t.equal(ratio.lines[0]!.at(-1), 25, 'one hit in four requests, not the mean of 100% and 0%');
  const time = h.history.series('a', vres('client_http_res_time1'), GRAPH_TYPES.day);
  t.equal(time.lines[0]!.at(-1), 25, '(10 + 90) ms over 4 answers');
  const all = h.history.series(ALL_HOSTS_SCOPE, vres('hitratio'), GRAPH_TYPES.day);
  t.ok(Math.abs(all.lines[0]!.at(-1)! - 100 / 6) < 1e-9, 'all hosts: one hit in six requests');
  const rate = h.history.series(ALL_HOSTS_SCOPE, vres('client_http_res'), GRAPH_TYPES.day);
  t.equal(rate.lines[1]!.at(-1), 3, 'all hosts: (1 + 2 + 3 + 0) requests over 2 seconds');
});

t.test('global lines read the System members; a member the document lacks is a gap, not a zero', async (t) => {
  const h = harness(t);
  h.run(10, {});
  const cpu = h.history.series(NODE_SCOPE, gres('cpu'), GRAPH_TYPES.dash);
  t.equal(cpu.lines[0]!.at(-1), 20, 'Kernel+User = 20%');
  t.equal(cpu.lines[1]!.at(-1), 5, 'Kernel = 5%');
  const socks = h.history.series(NODE_SCOPE, gres('ssockevent'), GRAPH_TYPES.dash);
  t.ok(socks.lines.every((l) => l.every(Number.isNaN)), 'no ServerSocket member: nothing drawn');
});

t.test('acldenied draws the clients the access control refused per second', async (t) => {
  const h = harness(t);
  for (const deny of [2, 3]) h.run(1, {}, {}, { ServiceAccess: { Allow: 0, Deny: deny } });
  const denied = h.history.series(NODE_SCOPE, gres('acldenied'), GRAPH_TYPES.day);
  t.equal(denied.lines[0]!.at(-1), 2.5, '(2 + 3) denied over 2 seconds');
});

t.test('week Peak is the largest 5-minute value of its 30 minutes, month Peak the largest 30-minute value', async (t) => {
  const h = harness(t);
  // Four 30-minute blocks of six 5-minute steps: 1..6, 11..16, 1..6, 1..6 requests a second.
  for (const base of [0, 10, 0, 0]) for (let k = 1; k <= 6; k++) h.run(300, { requests: base + k });
  h.run(1, {});
  const week = h.history.series('a', vres('client_http_res'), GRAPH_TYPES.week);
  t.same(points(week.lines[1]!, week.start, week.step).slice(0, 4), [[0, 3.5], [1800, 13.5], [3600, 3.5], [5400, 3.5]], 'week: 30-minute means');
  t.same(points(week.peak!, week.start, week.step).slice(0, 4), [[0, 6], [1800, 16], [3600, 6], [5400, 6]], 'week Peak: largest 5-minute value');
  const month = h.history.series('a', vres('client_http_res'), GRAPH_TYPES.month);
  t.same(points(month.lines[1]!, month.start, month.step).slice(0, 1), [[0, 6]], 'month: the 2-hour mean');
  t.same(points(month.peak!, month.start, month.step), [[0, 13.5]], 'month Peak: the largest 30-minute mean');
  t.equal(GRAPH_TYPES.day.peak || GRAPH_TYPES.dash.peak, false, 'no Peak below week');
});

t.test('the open step written at close goes on after a reopen', async (t) => {
  const h = harness(t);
  h.run(100, { requests: 3 });
  h.history.close();
  const again = harness(t, h.file);
  again.at(100);
  again.run(200, { requests: 0 });
  const s = again.history.series('a', vres('client_http_res'), GRAPH_TYPES.day);
  t.same(points(s.lines[1]!, s.start, s.step), [[0, 1]], '300 requests over the 300 seconds of both processes');
  const week = again.history.series('a', vres('client_http_res'), GRAPH_TYPES.week);
  t.equal(week.peak!.at(-1), 3, 'the week Peak kept the first part of the step');
});

t.test('round robin: a slot reused a round later shows only the newer step', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'graph-'));
  const store = RrdStore.open(path.join(dir, 'r.sqlite'), () => undefined);
  t.teardown(() => store.close());
  const a0 = ARCHIVES[0]!;
  const acc = (v: number) => { const x = new Float64Array(VHOST_LAYOUT.width); x[0] = v; x[1] = 1; return x; };
  store.commit(T0, new Map([['a', acc(7)]]), true);
  const later = T0 + a0.rows * a0.step;
  store.commit(later, new Map([['a', acc(9)]]), true);
  t.same([...store.rows('a', a0, T0, T0 + a0.step).keys()], [], 'the older round is gone');
  t.same([...store.rows('a', a0, later, later + a0.step).values()].map((d) => d[0]), [9]);
});

t.test('a host no longer served loses its history; the node and the sum of hosts stay', async (t) => {
  const h = harness(t);
  h.run(301, { requests: 1 }, { requests: 1 });
  h.history.retain(['a']);
  const gone = h.history.series('b', vres('client_http_res'), GRAPH_TYPES.day);
  t.ok(gone.lines[1]!.every(Number.isNaN));
  const kept = h.history.series('a', vres('client_http_res'), GRAPH_TYPES.day);
  t.ok(kept.lines[1]!.some((v) => v === 1));
  const all = h.history.series(ALL_HOSTS_SCOPE, vres('client_http_res'), GRAPH_TYPES.day);
  t.ok(all.lines[1]!.some((v) => v === 2));
});

t.test('a step the store cannot take is lost alone: the next steps are written', async (t) => {
  const h = harness(t);
  const commit = h.store.commit.bind(h.store);
  let failures = 1;
  h.store.commit = (...args) => { if (failures-- > 0) throw new Error('disk full'); commit(...args); };
  h.run(300, { requests: 1 });
  t.throws(() => h.run(1, { requests: 2 }), /disk full/, 'the failure reaches the caller (the service logs it)');
  h.at(301);
  h.run(300, { requests: 2 });
  const s = h.history.series('a', vres('client_http_res'), GRAPH_TYPES.day);
  t.same(points(s.lines[1]!, s.start, s.step), [[300, 2], [600, 2]], 'the first step is lost, the second stored, the third open');
});
