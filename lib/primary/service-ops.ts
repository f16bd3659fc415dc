// The operations of the management API on the node itself: restart (a new primary and new
// workers take over the same sockets; see lib/supervisor) and stop (a drain, as SIGTERM). Each
// writes its info log line; the watch log gets the stop (00010002) and start (00010001) events
// from the setting lifecycle of the primary that stops and of the one that starts.
import { createPublicKey } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { InstallAnswer, ServiceControl } from '../manager/routes/service.js';
import { InstallError, prepareInstall } from '../release/install.js';
import { openRepository } from '../release/repository.js';
import { resolvePath } from '../setting/resolve.js';
import type { Setting } from '../setting/types.js';
import { ENTRY_ENV } from '../ipc/supervisor-messages.js';
import { PRODUCT_VERSION } from '../version.js';
import { HTTP } from '../manager/envelope.js';
import type { SettingLifecycle } from '../lifecycle/index.js';
import type { SupervisorLink } from './supervisor-link.js';
import type { LicenseService } from '../license/service.js';
import { encryptSecret } from '../license/secret-box.js';

interface Node {
  current(): Setting;
  readonly license: LicenseService;
  readonly lifecycle: SettingLifecycle;
  readonly supervisor: SupervisorLink;
  shutdown(reason: string, handover?: boolean): Promise<void>;
}

/** Time for an answer already written to leave before its management port closes. */
const ANSWER_GRACE_MS = 100;

/** The directory of the running version (dist/lib/primary -> root). */
const RUNNING_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** `<root>/current` when the supervisor forks through such a link, else undefined. */
async function currentLink(): Promise<string | undefined> {
  const entry = process.env[ENTRY_ENV];
  if (entry === undefined || entry === '') return undefined;
  const link = path.resolve(entry, '../../..');
  if (path.basename(link) !== 'current') return undefined;
  return (await fs.lstat(link).catch(() => undefined))?.isSymbolicLink() === true ? link : undefined;
}

export class ServiceOps implements ServiceControl {
  private installing = false;

  constructor(private readonly node: Node) {
    // The new primary serves: the answer to the restart goes out, then this one steps aside.
    node.supervisor.onHandover = () => void setTimeout(() => void node.shutdown('restart', true), ANSWER_GRACE_MS);
  }

  async restart(): Promise<void> {
    await this.node.lifecycle.events.info('service restart requested', { source: 'api' }).catch(() => undefined);
    try {
      await this.node.supervisor.restart();
    } catch (err) {
      await this.node.lifecycle.events.info('service restart failed; the running processes stay', { reason: (err as Error).message }).catch(() => undefined);
      throw err;
    }
  }

  /** Only under an Available license (document 1: "service process not running" otherwise). */
  encryptPassword(plain: string): { value: string } | { problem: string } {
    const problem = this.node.license.problem();
    const key = this.node.license.secretKey();
    if (problem !== undefined || key === undefined) return { problem: problem ?? 'no valid license' };
    return { value: encryptSecret(key, plain) };
  }

  async install(version: string | undefined): Promise<InstallAnswer> {
    if (this.installing) return { ok: false, httpStatus: HTTP.conflict, message: 'an install is already under way' };
    this.installing = true;
    try {
      return await this.installOnce(version);
    } finally {
      this.installing = false;
    }
  }

  private async installOnce(version: string | undefined): Promise<InstallAnswer> {
    const setting = this.node.current();
    const events = this.node.lifecycle.events;
    const spec = setting.env.install.repository;
    if (spec === null) return { ok: false, httpStatus: HTTP.badRequest, message: 'no release repository is configured (env.install.repository)' };
    await events.info('package install requested', { version: version ?? 'latest', repository: spec }).catch(() => undefined);
    const refused = async (message: string, httpStatus: number = HTTP.internalError): Promise<InstallAnswer> => {
      await events.info('package install refused; the running version stays', { version: version ?? 'latest', running: PRODUCT_VERSION, reason: message }).catch(() => undefined);
      return { ok: false, httpStatus, message };
    };
    let prepared;
    try {
      const keyFile = resolvePath(setting, setting.env.install.publicKey);
      const publicKey = createPublicKey(await fs.readFile(keyFile, 'utf8').catch(() => { throw new InstallError(`cannot read the release public key ${keyFile}`); }));
      prepared = await prepareInstall({
        running: PRODUCT_VERSION, runningRoot: RUNNING_ROOT, currentLink: await currentLink(),
        repository: openRepository(spec, setting.env.home), publicKey,
      }, version);
    } catch (err) {
      return refused(`install failed: ${(err as Error).message}; ${PRODUCT_VERSION} stays`);
    }
    if (prepared.kind === 'unavailable') return refused(`${prepared.version} is not available.`, HTTP.notFound);
    if (prepared.kind === 'current') return { ok: true, message: `${prepared.version} is already the current version.` };
    try {
      await this.restart();
    } catch (err) {
      await prepared.switchBack();
      return refused(`installed ${prepared.to} did not start (${(err as Error).message}); ${prepared.from} stays`);
    }
    await events.info('package installed', { from: prepared.from, to: prepared.to }).catch(() => undefined);
    return { ok: true, message: `installing from ${prepared.from} to ${prepared.to}: done, ${prepared.to} serves.` };
  }

  async stop(): Promise<void> {
    await this.node.lifecycle.events.info('service stop requested', { source: 'api' }).catch(() => undefined);
    this.node.supervisor.stopping();
    setTimeout(() => void this.node.shutdown('api stop'), ANSWER_GRACE_MS);
  }
}
