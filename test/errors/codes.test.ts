// The table of error codes (lib/errors/codes.ts) and README's list of them ("Error codes") name
// the same codes with the same statuses, so a code cannot be added, dropped or moved to another
// status without the documentation following; and the factory makes what a catcher reads.
import t from 'tap';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { codedError, ERROR_CODES, isCoded, rebuildCoded } from '../../lib/errors/codes.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** README's "Error codes" rows: code -> status. */
async function documented(): Promise<Map<string, number>> {
  const readme = await fs.readFile(path.join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('\n### Error codes\n');
  if (start < 0) throw new Error('README.md has no "### Error codes" section');
  const end = readme.indexOf('\n#', start + 1);
  const rows = readme.slice(start, end < 0 ? undefined : end).matchAll(/^\| `([A-Z0-9_]+)` \| (\d{3}) \|/gm);
  return new Map([...rows].map((m) => [m[1]!, Number(m[2])]));
}

t.test('every code of the table is in README with its status, and README lists no other', async (t) => {
  const docs = await documented();
  const table = new Map(Object.entries(ERROR_CODES).map(([code, e]) => [code, e.status]));
  t.ok(table.size > 0 && docs.size > 0, 'both lists are read');
  t.same([...table.keys()].filter((c) => !docs.has(c)), [], 'codes of the table missing from README');
  t.same([...docs.keys()].filter((c) => !table.has(c)), [], 'codes in README that the table does not have');
  t.same([...docs].filter(([c, s]) => table.has(c) && table.get(c) !== s), [], 'codes whose README status differs from the table');
});

t.test('a coded error carries its code, the table status and the message its template makes', async (t) => {
  const err = codedError('VHOST_NOT_FOUND', 'a.example');
  t.match(err, { code: 'VHOST_NOT_FOUND', status: 404, message: 'virtual host not found: a.example' });
  t.ok(isCoded(err, 'VHOST_NOT_FOUND', 'RT_NOT_RUNNING'));
  t.notOk(isCoded(err, 'RT_NOT_RUNNING'), 'another code is not taken for it');
  t.notOk(isCoded(Object.assign(new Error('x'), { code: 'VHOST_NOT_FOUND' })), 'an ad-hoc error with the same spelling is not one of the table');
  t.equal(codedError('GRAPH_BUSY', 64).message, '64 graphs are already waiting to be drawn; try again shortly');
});

t.test('an error sent across a process boundary as code and message comes back as its code', async (t) => {
  const back = rebuildCoded('RT_NOT_RUNNING', 'RT not running');
  t.ok(isCoded(back, 'RT_NOT_RUNNING'));
  t.match(back, { status: 503, message: 'RT not running' });
  const other = rebuildCoded('ENOENT', 'no such file');
  t.notOk(isCoded(other), 'a code outside the table stays a plain error');
  t.match(other, { code: 'ENOENT', message: 'no such file' });
});
