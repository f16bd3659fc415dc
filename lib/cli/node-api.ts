// How the command line reaches a running node's management API. The port is the setting file's
// (--setting, else the default path of lib/cli/main.ts); a file that does not load still gives
// its port when its JSON names one (a reload of a refused file must reach the node to be told
// why), and without any the documented default 10040 is tried, saying so.
import fs from 'node:fs/promises';
import path from 'node:path';
import { request } from 'undici';
import { loadSettingFile } from '../setting-check/load.js';

/** env.management.api.port's default (lib/setting/schema/management.ts). */
const DEFAULT_API_PORT = 10040;

export interface Answer { status: number; body: Record<string, unknown> }

/** The port the JSON of a file names, when it names one (the file may be refused otherwise). */
async function rawPort(file: string): Promise<number | undefined> {
  try {
    const doc = JSON.parse(await fs.readFile(file, 'utf8')) as { env?: { management?: { api?: { port?: unknown } } } };
    const port = doc.env?.management?.api?.port;
    return Number.isInteger(port) && (port as number) > 0 && (port as number) < 65536 ? (port as number) : undefined;
  } catch {
    return undefined;
  }
}

/** Where the node's API is: --api, else the plain management port of the setting file on loopback. */
export async function apiBase(flags: Record<string, string | true>, defaultSetting: string, err: (s: string) => void): Promise<string> {
  if (typeof flags.api === 'string') return flags.api.replace(/\/$/, '');
  const file = typeof flags.setting === 'string' ? path.resolve(flags.setting) : defaultSetting;
  try {
    const { setting } = await loadSettingFile(file);
    return `http://127.0.0.1:${setting.env.management.api.port}`;
  } catch (e) {
    const port = await rawPort(file);
    const why = (e as Error).message.split('\n')[0];
    err(`note: ${file} does not load (${why}); ${port === undefined ? `trying the default management port ${DEFAULT_API_PORT}` : `its env.management.api.port ${port} is used`}\n`);
    return `http://127.0.0.1:${port ?? DEFAULT_API_PORT}`;
  }
}

/** One call; undefined when the node cannot be reached. */
export async function call(base: string, p: string): Promise<Answer | undefined> {
  try {
    const r = await request(`${base}${p}`, { headersTimeout: 600_000, bodyTimeout: 600_000 });
    const text = await r.body.text();
    let body: Record<string, unknown> = {};
    try { body = JSON.parse(text) as Record<string, unknown>; } catch { body = { message: text }; }
    return { status: r.statusCode, body };
  } catch {
    return undefined;
  }
}
