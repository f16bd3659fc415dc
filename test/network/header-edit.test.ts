// Header edit modes of the modify rules, applied to a header object as the pipeline does.
import t from 'tap';
import { applyEdits, compileEdit } from '../../lib/network/header-edit.js';

const run = (h: Record<string, string | string[] | number | undefined>, ...edits: Parameters<typeof compileEdit>[0][]) => {
  applyEdits(h, edits.map(compileEdit));
  return h;
};

t.test('set replaces or creates, add adds a field line, append extends the value, unset removes', async (t) => {
  t.strictSame(run({ 'x-a': 'old' }, { key: 'X-A', mode: 'set', value: 'new' }), { 'x-a': 'new' });
  t.strictSame(run({}, { key: 'X-A', mode: 'set', value: 'new' }), { 'x-a': 'new' });
  t.strictSame(run({ 'set-cookie': 'a=1' }, { key: 'Set-Cookie', mode: 'add', value: 'b=2' }), { 'set-cookie': ['a=1', 'b=2'] });
  t.strictSame(run({ 'x-l': ['1', '2'] }, { key: 'x-l', mode: 'add', value: '3' }), { 'x-l': ['1', '2', '3'] });
  t.strictSame(run({ vary: 'accept' }, { key: 'Vary', mode: 'append', value: 'x-device' }), { vary: 'accept, x-device' });
  t.strictSame(run({}, { key: 'Vary', mode: 'append', value: 'x-device' }), { vary: 'x-device' });
  t.strictSame(run({ server: 'x', 'x-k': '1' }, { key: 'Server', mode: 'unset', value: '' }), { 'x-k': '1' });
});

t.test('rewrite replaces what match finds with the captures, every value of a repeated field, nothing when absent', async (t) => {
  const e = { key: 'location', mode: 'rewrite' as const, match: '^http://origin\\.internal(/.*)$', value: 'https://www.example.com#1' };
  t.strictSame(run({ location: 'http://origin.internal/a?b' }, e), { location: 'https://www.example.com/a?b' });
  t.strictSame(run({ location: 'https://elsewhere/' }, e), { location: 'https://elsewhere/' });
  t.strictSame(run({}, e), {});
  t.strictSame(run({ 'x-v': ['a1', 'b2'] }, { key: 'x-v', mode: 'rewrite', match: '(\\d)', value: '<#1>' }), { 'x-v': ['a<1>', 'b<2>'] });
});

t.test('edits apply in order: a later one sees what an earlier one did', async (t) => {
  t.strictSame(run({}, { key: 'x', mode: 'set', value: 'a' }, { key: 'x', mode: 'append', value: 'b' }, { key: 'x', mode: 'rewrite', match: 'a, b', value: 'ab' }), { x: 'ab' });
});

t.test('framing fields and values with line breaks are refused when compiled', async (t) => {
  t.throws(() => compileEdit({ key: 'Transfer-Encoding', mode: 'set', value: 'chunked' }), /frames the message/);
  t.throws(() => compileEdit({ key: 'Host', mode: 'set', value: 'x' }), /frames the message/);
  t.throws(() => compileEdit({ key: 'X-A', mode: 'set', value: 'a\r\nInjected: 1' }), /line break/);
});
