// The replay chunks coalesced fetches keep for latecomers are bounded per fetch and for all
// fetches of a worker together: a fetch over either bound stops taking latecomers (they fetch on
// their own) and gives its bytes back; a finished fetch gives its bytes back.
import t from 'tap';
import { InflightTable } from '../../lib/pipeline/parts/inflight.js';

const MiB = 1024 * 1024;
const chunk = Buffer.alloc(256 * 1024);

t.test('the replay bytes of all fetches together stay under the worker budget', async (t) => {
  const table = new InflightTable(3 * MiB);
  const a = table.create('h\n/a', 2 * MiB);
  const b = table.create('h\n/b', 2 * MiB);
  for (let i = 0; i < 8; i++) a.push(chunk); // 2 MiB: within both bounds
  t.equal(table.budget.used, 2 * MiB);
  t.ok(table.get('h\n/a'), 'a still takes latecomers');
  for (let i = 0; i < 8; i++) b.push(chunk); // would make 4 MiB together
  t.ok(table.budget.used <= 3 * MiB, `used ${table.budget.used}`);
  t.equal(table.get('h\n/b'), undefined, 'b stopped taking latecomers');
  t.equal(table.budget.used, 2 * MiB, 'and gave its bytes back');
  table.finish(a);
  t.equal(table.budget.used, 0, 'a finished fetch frees its replay');
});

t.test('a fetch over its own bound frees its replay', async (t) => {
  const table = new InflightTable(64 * MiB);
  const f = table.create('h\n/big', MiB);
  for (let i = 0; i < 5; i++) f.push(chunk);
  t.equal(table.get('h\n/big'), undefined);
  t.equal(table.budget.used, 0);
});

t.test('a detached fetch keeps no replay at all', async (t) => {
  const table = new InflightTable(64 * MiB);
  const f = table.detached('h\n/alone', MiB);
  f.push(chunk);
  t.equal(table.budget.used, 0);
});
