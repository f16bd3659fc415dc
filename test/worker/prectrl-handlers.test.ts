// The worker's side of pre-cache control: each message of the primary is checked whole before the
// table changes (a malformed one is refused and changes nothing), and the entries of a new slice
// are told to `arrived` (their fetches under way retire).
import t from 'tap';
import { PRECTRL_SLICE } from '../../lib/ipc/messages.js';
import { QueuedCommands, type PrectrlEntry } from '../../lib/pipeline/parts/queued-commands.js';
import { prectrlHandlers } from '../../lib/worker/prectrl-handlers.js';

const target = (prefix: string) => ({ vhost: 'a.com', prefix, wildcard: false, text: prefix });
const entry = (prefix: string) => ({ vhost: 'a.com', kind: 'purge' as const, target: target(prefix), queuedAt: 5 });

t.test('a well-formed change applies; a malformed one is refused and changes nothing', async (t) => {
  const table = new QueuedCommands();
  const arrived: PrectrlEntry[] = [];
  const h = prectrlHandlers(() => table, (e) => arrived.push(e));
  h['prectrl-add']({ id: 1, entries: [entry('/a'), { ...entry('/w'), target: { ...target('/w/'), wildcard: true, pattern: '^/w/\\d+$', flags: '' } }] });
  t.equal(table.naming('a.com', '/a')?.kind, 'purge');
  t.equal(table.naming('a.com', '/w/12')?.kind, 'purge', 'a wildcard with its pattern');
  t.equal(table.naming('a.com', '/w/x'), undefined);
  t.equal(arrived.length, 2);
  const bad: Array<[string, unknown]> = [
    ['an unknown kind', { id: 2, entries: [entry('/b'), { ...entry('/c'), kind: 'delete' }] }],
    ['a target of another host', { id: 2, entries: [{ ...entry('/b'), target: { ...target('/b'), vhost: 'b.com' } }] }],
    ['a target without its prefix', { id: 2, entries: [{ ...entry('/b'), target: { vhost: 'a.com', wildcard: false, text: '/b' } }] }],
    ['a pattern that is no regular expression', { id: 2, entries: [{ ...entry('/b'), target: { ...target('/b'), wildcard: true, pattern: '(' } }] }],
    ['an id that is no integer', { id: '2', entries: [entry('/b')] }],
    ['entries that are no list', { id: 2, entries: { 0: entry('/b') } }],
    ['more entries than a slice holds', { id: 2, entries: Array.from({ length: PRECTRL_SLICE + 1 }, (_, i) => entry(`/b${i}`)) }],
  ];
  for (const [what, args] of bad) {
    t.throws(() => h['prectrl-add'](args as never), `${what} is refused`);
  }
  t.equal(table.naming('a.com', '/b'), undefined, 'nothing of the refused messages counts');
  t.equal(arrived.length, 2, 'nor was any of it told');
  t.throws(() => h['prectrl-host-off']({ vhost: 7 } as never));
  t.throws(() => h['prectrl-drop']({ id: null } as never));
  t.equal(table.naming('a.com', '/a')?.kind, 'purge', 'still there');
  h['prectrl-drop']({ id: 1 });
  t.equal(table.size, 0);
});
