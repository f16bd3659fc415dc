// Watch-log event codes of document 3, and the entry point other parts of the primary write
// watch events through. The primary's global logs register themselves as the sink at start;
// before that (or in a process without global logs) an event goes nowhere.
export const WATCH = {
  started: '00010001',
  stopped: '00010002',
  hostAdded: '00020001',
  hostDeleted: '00020002',
  hostChanged: '00020003',
  hostFullsync: '00020004',
  /** Body: the whole env.log setting. */
  backupStarted: '00030001',
  /** Body: {}. */
  backupRemoved: '00030002',
  /** Body: the whole env.log setting. */
  backupChanged: '00030003',
  /** Body: BackupAttempt. */
  backupTried: '00030004',
} as const;
export type WatchEvent = (typeof WATCH)[keyof typeof WATCH];

/** The body of 00030004: one attempt of the backup scheduler to upload a log unit. */
export interface BackupAttempt {
  /** Repository name (env.log.repository.list[].name). */
  name: string;
  /** `yyyy-mm-dd` and `hh:mm:ss` (UTC) of the attempt. */
  date: string;
  time: string;
  /** The path the unit was uploaded to. */
  path: string;
  bytes: number;
  /** null when the upload succeeded. */
  error: string | null;
}

type WatchSink = (event: WatchEvent, vhost: string | undefined, body: unknown) => void;
let sink: WatchSink | undefined;

export function setWatchSink(fn: WatchSink | undefined): void {
  sink = fn;
}

/** Writes one watch event (vhost undefined: a global event, `-` in the line). */
export function writeWatchEvent(event: WatchEvent, body: unknown, vhost?: string): void {
  sink?.(event, vhost, body);
}
