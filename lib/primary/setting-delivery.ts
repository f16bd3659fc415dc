// The setting's way from the primary to its workers, apart from primary.ts (which decides what
// follows a committed setting): every delivery gets a new generation, the workers confirm or
// refuse that generation (setting-acks.ts), and a setting the workers refused is sent back as
// the running one. The generation the running setting was delivered under is what a worker
// that says hello gets, and what a worker that became ready with another one gets again.
import type { Worker } from 'node:cluster';
import type { PrimaryMessage } from '../ipc/messages.js';
import { systemLog } from '../log/system-log.js';
import type { Setting } from '../setting/types.js';
import { SettingAcks } from './setting-acks.js';

type ChangedHosts = string[] | 'all';

export class SettingDelivery {
  /** Generation counter of the settings sent to the workers (each delivery gets a new one). */
  private generation = 0;
  /** The generation the running setting was delivered under. */
  running = 0;
  /** The workers' answers: `ready` (ack), `listen-error` / `apply-error` (refuse), exit (gone). */
  readonly acks = new SettingAcks();

  /** `baseDir`: the setting file's directory, which the workers resolve relative paths against. */
  constructor(private readonly send: (worker: Worker, m: PrimaryMessage) => void, private readonly baseDir: () => string) {}

  /** The running setting, whole, under its generation. */
  sendRunning(worker: Worker, setting: Setting): void {
    this.sendSetting(worker, setting, this.running, 'all');
  }

  /**
   * Delivers `setting` to `workers`; once all confirmed, its generation is the running one. A
   * refusal, a listening socket that cannot be opened or a timeout sends `previous` back to
   * `live()` workers and rejects; a worker that cannot take it back either is replaced with it
   * (`restart`).
   */
  async replace(workers: Worker[], setting: Setting, previous: Setting, changedHosts: ChangedHosts, live: () => Worker[], restart: () => void): Promise<void> {
    if (workers.length === 0) return;
    try {
      this.running = await this.deliver(workers, setting, changedHosts);
    } catch (err) {
      systemLog.error({ err: (err as Error).message }, 'setting refused by the workers; rolling back');
      try {
        this.running = await this.deliver(live(), previous, changedHosts);
      } catch (e) {
        // A worker that cannot take the running setting back is replaced with it.
        systemLog.error({ err: (e as Error).message }, 'rollback failed; restarting the workers');
        restart();
      }
      throw err;
    }
  }

  /** Sends a setting to the workers; resolves to its generation when every one applied it. */
  private async deliver(workers: Worker[], setting: Setting, changedHosts: ChangedHosts): Promise<number> {
    const generation = ++this.generation;
    if (workers.length === 0) return generation;
    const done = this.acks.wait(generation, workers);
    for (const w of workers) this.sendSetting(w, setting, generation, changedHosts);
    await done;
    return generation;
  }

  private sendSetting(worker: Worker, setting: Setting, generation: number, changedHosts: ChangedHosts): void {
    this.send(worker, { type: 'setting', setting, baseDir: this.baseDir(), generation, changedHosts });
  }
}
