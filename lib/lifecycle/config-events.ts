// The watch log and the info log of configuration changes (document 3): one line per event,
// `date time event vhost body-json` in watch.log and `date time message fields-json` in info.log.
// Kept to this one small writer so that rolling (another piece of work) replaces only this file.
import fs from 'node:fs/promises';
import path from 'node:path';
import { resolvePath } from '../setting/load.js';
import type { Setting } from '../setting/types.js';
import type { BackupEvent } from '../log/repository/scheduler.js';

/** Watch-log event codes of document 3 that the setting lifecycle writes. */
export const WATCH = {
  started: '00010001',
  stopped: '00010002',
  hostAdded: '00020001',
  hostDeleted: '00020002',
  hostChanged: '00020003',
  hostFullsync: '00020004',
} as const;
export type WatchEvent = (typeof WATCH)[keyof typeof WATCH];

/** `yyyy-mm-dd` and `hh:mm:ss` in UTC, the time of every log line and history entry. */
export function stamp(d: Date = new Date()): { date: string; time: string } {
  const iso = d.toISOString();
  return { date: iso.slice(0, 10), time: iso.slice(11, 19) };
}

export class ConfigEvents {
  /** Appends are chained so lines keep their order without blocking the event loop. */
  private tail: Promise<void> = Promise.resolve();
  private watchFile: string | undefined;
  private infoFile: string | undefined;
  private hostEvents = true;

  constructor(setting: Setting) {
    this.configure(setting);
  }

  /**
   * Where the logs go and which are on. The log directories are `env` members, so the caller
   * passes the running setting (an env change waits for the restart like every other).
   */
  configure(setting: Setting): void {
    const log = setting.env.log;
    const dirOf = (dir: string | null): string => resolvePath(setting, dir ?? log.meta.dir);
    this.watchFile = log.watch.enable ? path.join(dirOf(log.watch.dir), 'watch.log') : undefined;
    this.infoFile = log.info.enable ? path.join(dirOf(log.info.dir), 'info.log') : undefined;
    this.hostEvents = log.watch.events.setting.enable;
  }

  /** True when virtual-host events (0002xxxx) are recorded; start/stop always are. */
  get hostEventsEnabled(): boolean {
    return this.hostEvents && this.watchFile !== undefined;
  }

  watch(event: WatchEvent | BackupEvent, vhost: string | undefined, body: unknown): Promise<void> {
    if (this.watchFile === undefined) return this.tail;
    if (event.startsWith('0002') && !this.hostEvents) return this.tail;
    const { date, time } = stamp();
    return this.append(this.watchFile, `${date} ${time} ${event} ${vhost ?? '-'} ${JSON.stringify(body ?? {})}\n`);
  }

  info(message: string, fields: Record<string, unknown> = {}): Promise<void> {
    if (this.infoFile === undefined) return this.tail;
    const { date, time } = stamp();
    return this.append(this.infoFile, `${date} ${time} ${message.replace(/\s+/g, ' ')} ${JSON.stringify(fields)}\n`);
  }

  /** Resolves when every line written so far is on its way to the file. */
  flush(): Promise<void> {
    return this.tail;
  }

  private append(file: string, line: string): Promise<void> {
    const next = this.tail.then(async () => {
      try {
        await fs.appendFile(file, line);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        await fs.mkdir(path.dirname(file), { recursive: true });
        await fs.appendFile(file, line);
      }
    });
    // A log that cannot be written must not stop a deployment; the failure is reported once.
    this.tail = next.catch((err: unknown) => {
      process.emitWarning(`config log ${file}: ${(err as Error).message}`);
    });
    return this.tail;
  }
}
