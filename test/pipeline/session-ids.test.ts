// Session ids: blocks of the primary's node-wide counter, asked for ahead, never per request.
import t from 'tap';
import { SessionIds } from '../../lib/pipeline/parts/session-ids.js';
import { SESSION_BLOCK, SessionBlocks } from '../../lib/primary/session-blocks.js';

t.test('the primary hands out blocks that never overlap, starting above the fallback range', async (t) => {
  const blocks = new SessionBlocks();
  const a = blocks.take();
  const b = blocks.take();
  t.equal(a.count, SESSION_BLOCK);
  t.equal(b.start, a.start + a.count);
  t.ok(a.start >= 2 ** 50 && Number.isSafeInteger(b.start + b.count));
  // The counter is the clock in microseconds: a primary started a second later starts a million
  // ids higher, above all its predecessor gave out unless that averaged over 1000 ids per ms.
  t.equal(new SessionBlocks(1_800_000_000_000).take().start, 1_800_000_000_000_000);
});

t.test('a worker asks once at start and again when half of its block is used, never per id', async (t) => {
  const blocks = new SessionBlocks();
  let asks = 0;
  const ids = new SessionIds(() => { asks++; });
  t.equal(asks, 1, 'asked at start');
  ids.addBlock(blocks.take(8).start, 8);
  const got: number[] = [];
  for (let i = 0; i < 4; i++) got.push(ids.take());
  t.equal(asks, 1, 'not yet');
  got.push(ids.take());
  t.equal(asks, 2, 'asked ahead at half the block');
  got.push(ids.take());
  t.equal(asks, 2, 'once');
  const spare = blocks.take(8);
  ids.addBlock(spare.start, 8);
  for (let i = 0; i < 4; i++) got.push(ids.take());
  t.equal(got[8], spare.start, 'the spare block follows the used one');
  t.equal(new Set(got).size, got.length);
  t.ok(ids.fromPrimary);
});

t.test('before any block the ids come from a fallback range below every primary block', async (t) => {
  const a = new SessionIds(undefined, 1234);
  const b = new SessionIds(undefined, 1235);
  const fromA = [a.take(), a.take()];
  const fromB = b.take();
  t.ok(fromA.every((id) => id >= 2 ** 49 && id < 2 ** 50));
  t.not(fromA[1], fromA[0]);
  t.notOk(fromA.includes(fromB), 'another process, another span');
  t.notOk(a.fromPrimary);
  const blocks = new SessionBlocks();
  const first = blocks.take(4);
  a.addBlock(first.start, 4);
  t.equal(a.take(), first.start, 'the first block is used as soon as it arrives');
});
