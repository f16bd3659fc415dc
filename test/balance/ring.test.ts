import t from 'tap';
import { HashRing } from '../../lib/balance/ring.js';
import { urlIgnoreHashKey } from '../../lib/balance/hash-key.js';

t.test('every key has one owner among the workers, spread roughly evenly', async (t) => {
  const ring = new HashRing([0, 1, 2, 3]);
  const counts = [0, 0, 0, 0];
  for (let i = 0; i < 20000; i++) counts[ring.owner(`a.com/obj/${i}`)]!++;
  for (const c of counts) t.ok(c > 3500 && c < 6500, `share ${c} of 20000 is near a quarter`);
});

t.test('removing a worker moves only the keys it owned', async (t) => {
  const before = new HashRing([0, 1, 2, 3]);
  const after = new HashRing([0, 1, 3]);
  let moved = 0, wronglyMoved = 0;
  for (let i = 0; i < 10000; i++) {
    const k = `a.com/x/${i}`;
    const o = before.owner(k);
    if (o === 2) moved++; else if (after.owner(k) !== o) wronglyMoved++;
  }
  t.equal(wronglyMoved, 0, 'keys of the remaining workers stay where they were');
  t.ok(moved > 1500 && moved < 3500, `the departed worker's ${moved} keys move`);
});

t.test('an empty ring owns nothing', async (t) => {
  t.equal(new HashRing([]).owner('x'), -1);
});

t.test('urlIgnoreList cuts the URL at the first match, #FUNCTION at the function keyword', async (t) => {
  const key = urlIgnoreHashKey(['#FUNCTION', '?'], ['pagedesk']);
  t.equal(key('a.com', '/p.html/pagedesk/edit/default'), 'a.com/p.html');
  t.equal(key('a.com', '/p.html?v=1'), 'a.com/p.html');
  t.equal(key('a.com', '/p.html'), 'a.com/p.html');
  t.equal(urlIgnoreHashKey([], [])('a.com', '/x?y'), 'a.com/x?y');
});
