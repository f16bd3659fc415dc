// A host removed from hosting[] loses all its content (document 2), so adding it again starts
// empty: every worker drops its memory objects, one of them the shared disk objects and rows.
import type { Worker } from 'node:cluster';
import type { RpcClient } from '../ipc/rpc.js';
import { systemLog } from '../log/system-log.js';
import type { Setting } from '../setting/types.js';

export async function dropRemovedHosts(rpc: RpcClient, workers: Worker[], previous: Setting, next: Setting): Promise<void> {
  const kept = new Set(next.hosting.map((h) => h.name));
  const names = previous.hosting.map((h) => h.name).filter((n) => !kept.has(n));
  if (names.length === 0 || workers.length === 0) return;
  try {
    // First every worker: its fetches of those hosts finish writing, its memory objects go.
    // Only then one worker empties the shared disk, so no late write brings a row back.
    await Promise.all(workers.map((w) => rpc.call(w, 'drop-hosts', { names, diskToo: false }, 120_000)));
    const objects = await rpc.call(workers[0]!, 'drop-hosts', { names, diskToo: true }, 120_000);
    systemLog.info({ hosts: names, objects }, 'content of removed hosts deleted');
  } catch (err) {
    systemLog.error({ hosts: names, err: (err as Error).message }, 'content of removed hosts could not be deleted');
  }
}
