// Shared by the license and query tests: the real management API started with the route groups
// under test as `extraRoutes` (as the primary hands them in), and a client that can send a body.
import { ManagementApi, type Route } from '../../lib/manager/index.js';
import { parseSetting } from '../../lib/setting-check/load.js';
import type { Setting } from '../../lib/setting/types.js';
import { freePort } from '../helpers/ports.js';
import { call, fakeRt, VERSION } from '../manager/fixtures/helpers.js';

export { VERSION };

/** A setting through the real loader, with loopback callers allowed as admin (or `role`). */
export function settingWith(input: Record<string, unknown> = {}, allowList: Array<{ addr: string; role?: string }> = [{ addr: '127.0.0.1' }]): Setting {
  const env = (input.env ?? {}) as Record<string, unknown>;
  return parseSetting({ ...input, env: { home: '/tmp', ...env, management: { api: { allowList } } } });
}

export async function startWith(setting: Setting, extraRoutes: Route[]): Promise<{ api: ManagementApi; port: number }> {
  const port = await freePort();
  setting.env.management.api.port = port;
  const api = new ManagementApi({ getSetting: () => setting, version: VERSION, rt: fakeRt(), host: '127.0.0.1', extraRoutes });
  await api.start();
  return { api, port };
}

/** A management API call that may carry a body (POST by default then). */
export { call as request };

/** A multipart/form-data body with one file part. */
export function multipart(name: string, filename: string, data: string): { headers: Record<string, string>; body: Buffer } {
  const boundary = '----svc-test-boundary';
  const body = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: application/xml\r\n\r\n${data}\r\n--${boundary}--\r\n`,
  );
  return { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body };
}

/**
 * Builds dist/ when a source of the command line is newer than its compiled file (`npm test`
 * builds first, so this is for running one test file alone).
 */
export async function ensureBuilt(root: string): Promise<void> {
  const { execFile } = await import('node:child_process');
  const fs = await import('node:fs/promises');
  const path = await import('node:path');
  const mtime = (f: string): Promise<number> => fs.stat(f).then((s) => s.mtimeMs, () => 0);
  const sources = ['bin/svc.ts'];
  for (const dir of ['lib/license', 'lib/query']) for (const f of await fs.readdir(path.join(root, dir))) sources.push(`${dir}/${f}`);
  let stale = false;
  for (const src of sources) {
    if ((await mtime(path.join(root, 'dist', src.replace(/\.ts$/, '.js')))) < (await mtime(path.join(root, src)))) stale = true;
  }
  if (!stale) return;
  await new Promise<void>((resolve) => {
    // Type errors elsewhere in the tree do not stop tsc from emitting.
    execFile(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: root }, () => resolve());
  });
}
