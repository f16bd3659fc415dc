// The operations of the management API on the node itself: restart (a new primary and new
// workers take over the same sockets; see lib/supervisor) and stop (a drain, as SIGTERM). Each
// writes its info log line; the watch log gets the stop (00010002) and start (00010001) events
// from the setting lifecycle of the primary that stops and of the one that starts.
import type { ServiceControl } from '../manager/routes/service.js';
import type { SettingLifecycle } from '../lifecycle/index.js';
import type { SupervisorLink } from './supervisor-link.js';
import type { LicenseService } from '../license/service.js';
import { encryptSecret } from '../license/secret-box.js';

interface Node {
  readonly license: LicenseService;
  readonly lifecycle: SettingLifecycle;
  readonly supervisor: SupervisorLink;
  shutdown(reason: string, handover?: boolean): Promise<void>;
}

/** Time for an answer already written to leave before its management port closes. */
const ANSWER_GRACE_MS = 100;

export class ServiceOps implements ServiceControl {
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

  async stop(): Promise<void> {
    await this.node.lifecycle.events.info('service stop requested', { source: 'api' }).catch(() => undefined);
    this.node.supervisor.stopping();
    setTimeout(() => void this.node.shutdown('api stop'), ANSWER_GRACE_MS);
  }
}
