import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DiskStore, type DiskStoreOptions } from '../../lib/cache/disk-store.js';

type Teardown = { teardown(fn: () => unknown): void };

/** A fresh temp directory removed when the test ends. */
export function tempDir(t: Teardown, name = 'cache'): string {
  const dir = mkdtempSync(join(tmpdir(), `svc-${name}-`));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A disk store that is closed when the test ends (before its directory goes). */
export function openDisk(t: Teardown, opts: DiskStoreOptions): DiskStore {
  const s = new DiskStore(opts);
  t.teardown(() => s.close());
  return s;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
