// Virtual-host administration (`/setting/vhosts`): each change edits hosting[] of the running
// setting (not setting.json on disk, whose local edits are deployed only by deploy/local),
// validates the whole setting, applies it like a deployment and records it.
// Errors carry the HTTP status of document 1 (400, 404, 409, 500, 510): a VhostError, whose
// status is the one document 1 gives that operation and cause, or VHOST_NOT_FOUND of
// lib/errors/codes.ts (404) for a host that is not there.
import { codedError } from '../errors/codes.js';
import { isPlainObject } from '../setting/merge.js';
import { loadCandidate, LoadFailure } from './candidate.js';
import type { SettingLifecycle } from './lifecycle.js';
import type { Applied } from './sources.js';

export class VhostError extends Error {
  constructor(readonly status: 400 | 409 | 500 | 510, reason: string) {
    super(reason);
    this.name = 'VhostError';
  }
}

type Raw = Record<string, unknown>;

/** The running setting as an object with a hosting[] array; 510 when it cannot be loaded. */
async function readFile(lc: SettingLifecycle): Promise<{ doc: Raw; hosting: Raw[] }> {
  let doc: unknown;
  try {
    const text = lc.runningRaw();
    if (text === undefined) throw new Error('no setting loaded yet');
    doc = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (err) {
    throw new VhostError(510, `cannot load setting.json: ${(err as Error).message}`);
  }
  if (!isPlainObject(doc)) throw new VhostError(510, 'cannot load setting.json: not a JSON object');
  if (doc.hosting === undefined) doc.hosting = [];
  if (!Array.isArray(doc.hosting)) throw new VhostError(510, 'cannot load setting.json: hosting is not an array');
  return { doc, hosting: doc.hosting as Raw[] };
}

function requireName(name: string | undefined): string {
  if (name === undefined || name === '') throw new VhostError(400, 'virtual host name missing');
  return name;
}

function hostBody(body: unknown, name?: string): Raw {
  if (!isPlainObject(body)) throw new VhostError(400, 'body must be a virtual host object');
  if (name !== undefined && body.name !== undefined && body.name !== name) {
    throw new VhostError(400, `body name "${String(body.name)}" differs from the path name "${name}"`);
  }
  if (name === undefined && (typeof body.name !== 'string' || body.name === '')) throw new VhostError(400, 'name: required string');
  return name === undefined ? body : { ...body, name };
}

export async function getVhost(lc: SettingLifecycle, name: string | undefined): Promise<Raw> {
  const n = requireName(name);
  const { hosting } = await readFile(lc);
  const h = hosting.find((x) => isPlainObject(x) && x.name === n);
  if (h === undefined) throw codedError('VHOST_NOT_FOUND', n);
  return h;
}

/** The file with `edit` applied to its hosting[], validated (400) and committed (500). */
async function change(lc: SettingLifecycle, edit: (hosting: Raw[]) => void, invalid: 400 | 500): Promise<Applied> {
  return lc.serial(async () => {
    const { doc, hosting } = await readFile(lc);
    edit(hosting);
    const text = `${JSON.stringify(doc, null, 2)}\n`;
    let c;
    try {
      c = await loadCandidate(text, lc.loadOptions(true));
    } catch (err) {
      if (err instanceof LoadFailure) {
        // Code 5 carries only the path; a deleted host named as basehost also ends up here.
        const what = err.code === 5 ? `resource file (or basehost) not found: ${err.message}` : err.message;
        throw new VhostError(invalid, `invalid setting: ${what}`);
      }
      throw err;
    }
    try {
      return await lc.commit(c, 'vhosts');
    } catch (err) {
      throw new VhostError(500, `error while updating settings: ${(err as Error).message}`);
    }
  });
}

export async function createVhost(lc: SettingLifecycle, body: unknown): Promise<Applied> {
  const host = hostBody(body);
  return change(lc, (hosting) => {
    if (hosting.some((x) => isPlainObject(x) && x.name === host.name)) throw new VhostError(409, `virtual host already exists: ${String(host.name)}`);
    hosting.push(host);
  }, 400);
}

export async function editVhost(lc: SettingLifecycle, name: string | undefined, body: unknown): Promise<Applied> {
  const n = requireName(name);
  const host = hostBody(body, n);
  return change(lc, (hosting) => {
    const i = hosting.findIndex((x) => isPlainObject(x) && x.name === n);
    if (i < 0) throw codedError('VHOST_NOT_FOUND', n);
    hosting[i] = host;
  }, 400);
}

export async function deleteVhost(lc: SettingLifecycle, name: string | undefined): Promise<Applied> {
  const n = requireName(name);
  // A deletion that leaves an invalid file (another host uses it as basehost) is an update error.
  return change(lc, (hosting) => {
    const i = hosting.findIndex((x) => isPlainObject(x) && x.name === n);
    if (i < 0) throw codedError('VHOST_NOT_FOUND', n);
    hosting.splice(i, 1);
  }, 500);
}
