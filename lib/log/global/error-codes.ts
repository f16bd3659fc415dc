// The one table of error-log codes (README "Error log codes"). Each code has a fixed level
// (document 3: 0 Emergency ... 7 Debug) and a fixed text; an event adds its own detail after the
// text. Codes are grouped by the part that reports them: 1xxx the setting and the process,
// 2xxx origins, 3xxx the cache disks, 4xxx the logs themselves, 5xxx the cluster's workers,
// 6xxx the content functions (pagedesk).
export const LEVELS = ['Emergency', 'Alert', 'Critical', 'Error', 'Warning', 'Notice', 'Info', 'Debug'] as const;
export type LevelName = (typeof LEVELS)[number];

export interface ErrorCode { level: number; text: string }

export const ERRORS = {
  /** A setting was refused (any source: API, file, SIGHUP); the running one stays. */
  '1001': { level: 4, text: 'setting refused' },
  /** The workers could not apply a setting; it was rolled back. */
  '1002': { level: 3, text: 'setting refused by the workers; rolled back' },
  /** The license makes the service Inactive. */
  '1003': { level: 2, text: 'license state Inactive' },
  /** setting.json was missing at start and came back from the history. */
  '1004': { level: 4, text: 'setting file restored from the history' },
  /** No answer from an origin: connect timeout, receive timeout, closed connection. */
  '2001': { level: 3, text: 'origin transaction failed' },
  /** A domain origin could not be resolved. */
  '2002': { level: 3, text: 'origin domain not resolved' },
  /** The origin answered 5xx. */
  '2003': { level: 4, text: 'origin answered with a server error' },
  /** A cache disk read or write failed. */
  '3001': { level: 3, text: 'cache disk I/O error' },
  /** A cache disk was taken out of service after consecutive errors. */
  '3002': { level: 2, text: 'cache disk marked Invalid' },
  /** A log file cannot be written (disk full, directory unwritable); its lines are dropped. */
  '4001': { level: 3, text: 'log file cannot be written; its lines are dropped' },
  /** The UDP log listener (env.log.meta.port) cannot listen. */
  '4002': { level: 3, text: 'log listener cannot listen' },
  /** A line on the log listener is not in the line format (README). */
  '4003': { level: 5, text: 'log listener line not understood' },
  /** A custom access-log format is invalid; the host logs in the svc form. */
  '4004': { level: 4, text: 'custom access log format invalid; svc form used' },
  /** An RT worker died; it is replaced. */
  '5001': { level: 1, text: 'worker died' },
  /** An RT worker could not start or be replaced. */
  '5002': { level: 1, text: 'worker failed to start' },
  /** Invalidation went on without every worker's acknowledgement. */
  '5003': { level: 3, text: 'invalidation incomplete' },
  /** A pagedesk source over maxSourceSize (passed through) or its HTML over maxDomSourceSize. */
  '6001': { level: 4, text: 'pagedesk source over its size limit; not edited' },
  /** A pagedesk edit could not be made (failed, late, edit queue full, HTML not where html.in.at says). */
  '6002': { level: 4, text: 'pagedesk edit failed; source passed through unedited' },
} as const satisfies Record<string, ErrorCode>;

export type ErrorCodeId = keyof typeof ERRORS;

export function levelOf(name: LevelName): number {
  return LEVELS.indexOf(name);
}

/** An error event: the code, and what is known of where it happened. */
export interface ErrorEvent {
  code: ErrorCodeId;
  vhost?: string | undefined;
  url?: string | undefined;
  ctxId?: string | undefined;
  detail?: string | undefined;
}
