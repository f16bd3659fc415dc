// In-process: the edit threads. An edit runs in a piscina thread; one over its time gives the
// source back unedited with the reason.
import t from 'tap';
import { EditPool } from '../../lib/pagedesk/pool.js';
import { MARKER } from '../../lib/pagedesk/edit.js';
import { pagedesk } from './fixtures.js';

const setting = pagedesk({ html: { enable: true }, dom: { remove: { enable: true, elements: ['font'] } } });

t.test('an edit runs in the thread and comes back edited', async (t) => {
  const pool = new EditPool();
  t.teardown(() => pool.close());
  const r = await pool.edit({ text: '<p><font>x</font>y</p>', setting, extract: undefined, host: 'a.com' });
  t.match(r, { outcome: 'edited', text: `${MARKER}\n<p>y</p>` });
});

t.test('an edit over its time is given up: the source comes back unedited with the reason', async (t) => {
  const pool = new EditPool(50);
  t.teardown(() => pool.close());
  // Deep nesting and many elements: far more than 50 ms of parsing and selecting.
  const text = `${'<div>'.repeat(5000)}${'<p><font>x</font></p>'.repeat(200_000)}${'</div>'.repeat(5000)}`;
  const late = await pool.edit({ text, setting, extract: undefined, host: 'a.com' });
  t.match(late, { outcome: 'unedited', reason: /longer than 50 ms/ });
});
