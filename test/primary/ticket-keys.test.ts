// The primary's TLS session ticket keys: 48 bytes for node, and a rotation publishes a new key
// that starting workers get from then on.
import t from 'tap';
import { TicketKeys } from '../../lib/primary/ticket-keys.js';

t.test('a rotation publishes a new 48-byte key, which is then the one a starting worker gets', async (t) => {
  const published: string[] = [];
  const keys = new TicketKeys((k) => published.push(k));
  const before = keys.current();
  t.equal(Buffer.from(before, 'base64').length, 48);
  keys.rotate();
  t.equal(published.length, 1);
  t.not(published[0], before);
  t.equal(Buffer.from(published[0]!, 'base64').length, 48);
  t.equal(keys.current(), published[0]);
});
