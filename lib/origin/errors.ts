// How undici/socket errors map onto the origin client's stable codes (ORIGIN_* of
// lib/errors/codes.ts, with the status the client gets). The mapping also decides what may be
// retried on another address and what counts against health.
import { CodedError, codeMessage, type ErrorCode } from '../errors/codes.js';

export type OriginErrorCode = Extract<ErrorCode, `ORIGIN_${string}`>;
/** `sc-sock-error` spellings of the origin log (`Client-Close`: our side closed first). */
export type SockError = 'Connect-Timeout' | 'Receive-Timeout' | 'Server-Close' | 'Client-Close' | 'Non-Existent-Domain';

/**
 * A subclass, not a bare code: it carries what the origin log and the retry need (the socket
 * error's spelling, the address and IP tried, the attempts).
 */
export class OriginError extends CodedError<OriginErrorCode> {
  readonly sockError: SockError;
  /** Configured address and IP of the last attempt, when one was made. */
  address: string | undefined;
  ip: string | undefined;
  /** How many addresses were tried before giving up. */
  attempts = 0;

  constructor(code: OriginErrorCode, sockError: SockError, message: string, cause?: unknown) {
    super(code, message, cause === undefined ? undefined : { cause });
    this.name = 'OriginError';
    this.sockError = sockError;
  }
}

/** What one failed attempt means for the request and for the address. */
export enum Failure {
  /** Nothing reached the origin: safe to try the next address; counts against health. */
  Connect,
  ConnectTimeout,
  /** Connection closed before any response byte: the request may have been seen. */
  Reset,
  /** The origin took the request and did not answer in time: never retried. */
  ReceiveTimeout,
  /** Our own pool was closed under the request (reset, DNS change): retry, no health penalty. */
  PoolClosed,
  /** The caller aborted (client went away): pass the error through untouched. */
  Aborted,
  /** Anything else (bad request body, protocol error): not retried. */
  Other,
}

const CONNECT_CODES = new Set([
  'ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'EADDRNOTAVAIL', 'ETIMEDOUT',
]);
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'ECONNABORTED']);

export function classify(err: unknown): Failure {
  const e = err as { code?: unknown; name?: unknown } | null;
  const code = e !== null && typeof e === 'object' ? e.code : undefined;
  if (typeof code === 'string') {
    if (code === 'UND_ERR_CONNECT_TIMEOUT') return Failure.ConnectTimeout;
    if (code === 'UND_ERR_HEADERS_TIMEOUT') return Failure.ReceiveTimeout;
    if (code === 'UND_ERR_ABORTED' || code === 'ABORT_ERR') return Failure.Aborted;
    if (code === 'UND_ERR_CLOSED' || code === 'UND_ERR_DESTROYED') return Failure.PoolClosed;
    if (CONNECT_CODES.has(code)) return Failure.Connect;
    if (RESET_CODES.has(code)) return Failure.Reset;
  }
  if (e !== null && typeof e === 'object' && e.name === 'AbortError') return Failure.Aborted;
  return Failure.Other;
}

export function toOriginError(kind: Failure, err: unknown): OriginError {
  const detail = (err as { code?: string; message?: string } | null)?.code ?? (err as Error | null)?.message ?? 'unknown';
  switch (kind) {
    case Failure.ConnectTimeout:
      return new OriginError('ORIGIN_TIMEOUT', 'Connect-Timeout', 'origin connect timeout', err);
    case Failure.ReceiveTimeout:
      return new OriginError('ORIGIN_TIMEOUT', 'Receive-Timeout', 'origin receive timeout', err);
    case Failure.Connect:
    case Failure.PoolClosed:
      // The spec has no "refused" spelling; the origin side refusing is logged as Server-Close.
      return new OriginError('ORIGIN_CONNECT', 'Server-Close', `origin connection failed (${detail})`, err);
    default:
      return new OriginError('ORIGIN_RESET', 'Server-Close', `origin closed without a response (${detail})`, err);
  }
}

/**
 * An answer whose status is no HTTP status: RFC 9110 15 defines 100-599, and undici passes any
 * three digits from 100 on. Nothing of it can be passed on or stored, so the exchange failed;
 * its sc-sock-error is Server-Close, as for the origin's other protocol errors (a broken chunked
 * body is one: undici's parser error).
 */
export function statusError(status: number): OriginError {
  return new OriginError('ORIGIN_PROTOCOL', 'Server-Close', codeMessage('ORIGIN_PROTOCOL', status));
}

/** The highest status an answer may have (RFC 9110 15). */
export const MAX_STATUS = 599;

export function dnsError(domain: string, err: unknown): OriginError {
  return new OriginError('ORIGIN_DNS', 'Non-Existent-Domain', codeMessage('ORIGIN_DNS', domain), err);
}
