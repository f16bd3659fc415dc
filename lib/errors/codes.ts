// The one table of the error codes this server throws, as fastify's lib/errors.js keeps its
// own: each code once, with the HTTP status it answers with and its message template, and one
// factory to throw it. A code used to be spelled out wherever it was thrown ('RT_NOT_RUNNING' in
// five files), and a subclass of Error stood for each code family; a catcher now asks for the
// code (`isCoded`) and an answer takes the status from here, so that the code, its status and
// its words cannot drift apart. README.md ("Error codes") lists every code of this table, and
// test/errors/codes.test.ts checks that the two name the same codes with the same statuses.
//
// A subclass of Error stays only where the error carries structure a code cannot: SettingError
// (the JSON paths of every bad member), RuleError (the path of the bad rule), OriginError (the
// log's socket-error spelling, the address tried, the attempts), LoadFailure (document 1's
// integer `error` of upload and restore), the parsers' errors that carry a position, and ApiError
// (a route's own reason with the status document 1 gives that route). Their codes, where they
// have one, still come from this table.
//
// This file imports nothing: every folder of lib/, the libraries at the bottom included, may
// import it (docs/pipeline.md, `errors-is-a-leaf`).

interface CodeEntry {
  /** The HTTP status a client gets for it: the management API's, or the proxy's for ORIGIN_*. */
  readonly status: number;
  /** `%s` takes the factory's arguments in order. */
  readonly message: string;
}

const CODES = {
  /** No RT worker is up to answer (none started yet, all gone, or one stopped answering). */
  RT_NOT_RUNNING: { status: 503, message: 'RT not running' },
  /** The request names a virtual host that is not being served. */
  VHOST_NOT_FOUND: { status: 404, message: 'virtual host not found: %s' },
  /** An invalidation target (`url=`) is missing or cannot be read. */
  BAD_TARGET: { status: 400, message: '%s' },
  /** An invalidation target names a host that is not served (502 for the purge family, README). */
  TARGET_UNKNOWN_HOST: { status: 502, message: 'unknown virtual host: %s' },
  /** The graph path names no resource of its kind or no type. */
  GRAPH_NOT_FOUND: { status: 404, message: 'no graph "%s": %s' },
  /** `vhost=` empty, or given to a global graph. */
  GRAPH_BAD_QUERY: { status: 400, message: '%s' },
  /** The render queue is full. */
  GRAPH_BUSY: { status: 503, message: '%s graphs are already waiting to be drawn; try again shortly' },
  /** A `/get` query (or `svc get`) that is malformed. */
  QUERY_BAD: { status: 400, message: 'bad query: %s' },
  /** A `/get` query naming nothing it knows. */
  QUERY_UNKNOWN: { status: 404, message: 'unknown query "%s": use setting, hosting, https, discover or license' },
  /** A setting refused (SettingError: the JSON path of each bad member). */
  SETTING_INVALID: { status: 400, message: '%s' },
  /** A network rule of the setting that does not compile (RuleError: its path). */
  BAD_RULE: { status: 400, message: '%s' },
  /** The Lua hash script of `balance` does not load or fails on a probe key. */
  LUA_HASH_INVALID: { status: 400, message: '%s: %s' },
  /** No origin address accepted a connection. */
  ORIGIN_CONNECT: { status: 502, message: '%s' },
  /** The origin did not connect or answer in time. */
  ORIGIN_TIMEOUT: { status: 504, message: '%s' },
  /** The origin closed the connection without an answer. */
  ORIGIN_RESET: { status: 502, message: '%s' },
  /** The origin's domain did not resolve. */
  ORIGIN_DNS: { status: 502, message: 'origin domain %s did not resolve' },
  /** The origin's answer is not HTTP (a status outside 100-599). */
  ORIGIN_PROTOCOL: { status: 502, message: 'origin answered with status %s, outside 100-599' },
} as const satisfies Record<string, CodeEntry>;

export type ErrorCode = keyof typeof CODES;

/** Each code and its entry, for the documentation check and for readers of the table. */
export const ERROR_CODES: Readonly<Record<ErrorCode, CodeEntry>> = CODES;

/** One argument per `%s` of the template, so a call with too few or too many does not compile. */
type Args<S extends string> = S extends `${string}%s${infer Rest}` ? [string | number, ...Args<Rest>] : [];

export type ArgsOf<C extends ErrorCode> = Args<(typeof CODES)[C]['message']>;

/** An error of the table: its code, its status and the message its template makes. */
export class CodedError<C extends ErrorCode = ErrorCode> extends Error {
  /** Typed as the table's statuses of C, so a caller with a narrow status type takes it as is. */
  readonly status: (typeof CODES)[C]['status'];

  constructor(readonly code: C, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CodedError';
    this.status = CODES[code].status;
  }
}

/** The message of `code` with `args` in its `%s` places. */
export function codeMessage<C extends ErrorCode>(code: C, ...args: ArgsOf<C>): string {
  let i = 0;
  return CODES[code].message.replace(/%s/g, () => String(args[i++]));
}

/**
 * The error to throw for `code`. `cause` keeps what went wrong underneath (a timeout, a closed
 * channel) for logs, while the client reads the code's one message.
 */
export function codedError<C extends ErrorCode>(code: C, ...args: ArgsOf<C>): CodedError<C> {
  return new CodedError(code, codeMessage(code, ...args));
}

/** The same, with the error underneath as its cause. */
export function codedErrorFrom<C extends ErrorCode>(cause: unknown, code: C, ...args: ArgsOf<C>): CodedError<C> {
  return new CodedError(code, codeMessage(code, ...args), { cause });
}

function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(CODES, code);
}

/** True for an error of the table with one of `codes` (any code of the table when none given). */
export function isCoded<C extends ErrorCode>(err: unknown, ...codes: C[]): err is CodedError<C> {
  return err instanceof CodedError && (codes.length === 0 || (codes as ErrorCode[]).includes(err.code));
}

/**
 * An error that crossed a process boundary as `{code, message}` (lib/ipc/rpc.ts): a code of the
 * table becomes its CodedError again, with the message as it was made on the other side.
 */
export function rebuildCoded(code: string | undefined, message: string): Error {
  if (isErrorCode(code)) return new CodedError(code, message);
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}
