// x-ctx-id values are version 4 UUIDs as randomUUID writes them, and never repeat across blocks.
import t from 'tap';
import { newContextId } from '../../lib/pipeline/parts/context-ids.js';

t.test('context ids are distinct lower-case version 4 UUIDs, block after block', async (t) => {
  const seen = new Set<string>();
  const shape = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  let bad = 0;
  for (let i = 0; i < 2000; i++) {
    const id = newContextId();
    if (!shape.test(id)) bad++;
    seen.add(id);
  }
  t.equal(bad, 0, 'every id has the UUID v4 shape');
  t.equal(seen.size, 2000, 'no id repeats');
});
