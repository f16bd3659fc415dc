// The disk writer thread reports its I/O errors to the node's log listener (env.log.meta.port):
// a write that fails is 3001, a disk taken out of service 3002, each naming the disk.
import t from 'tap';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UdpLogListener } from '../../lib/log/global/udp-listener.js';
import type { ErrorEvent } from '../../lib/log/global/error-codes.js';
import { metaOf, store } from './store-contract.js';
import { openDisk, tempDir } from './fixtures/helpers.js';
import { until } from '../helpers/wait.js';

t.test('a failing disk is reported by the writer thread over UDP: its errors, then Invalid', async (t) => {
  const events: ErrorEvent[] = [];
  const listener = new UdpLogListener({ error: (e) => events.push(e), info: () => undefined });
  t.teardown(() => listener.close());
  const logPort = await listener.start(0);
  const base = tempDir(t);
  const d1 = join(base, 'd1');
  const s = openDisk(t, { disks: [{ path: join(base, 'd0'), quota: 1_000_000 }, { path: d1, quota: 1_000_000 }], maxConsecutiveErrors: 3, logPort });
  rmSync(d1, { recursive: true, force: true });
  writeFileSync(d1, 'the disk is gone'); // every path under it now fails with ENOTDIR
  for (let i = 0; i < 30; i++) await store(s, metaOf({ vhost: 'd.example', url: `/after/${i}` }), 'body');
  await until(() => events.some((e) => e.code === '3002'), 'the Invalid report');
  const io = events.filter((e) => e.code === '3001');
  t.ok(io.length >= 1 && io.length <= 3, `the errors up to the limit (${io.length})`);
  t.match(io[0]!.detail, new RegExp(`^disk-writer/\\S+: ${d1.replace(/[/.]/g, '\\$&')}: ENOTDIR`));
  t.match(events.find((e) => e.code === '3002')!.detail, new RegExp(`^disk-writer/\\S+: ${d1.replace(/[/.]/g, '\\$&')} after 3 consecutive errors$`));
});
