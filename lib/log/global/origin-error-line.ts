// The deprecated originError log (document 3): one line per failed origin exchange and, with
// `warning`, per wrong HTTP exchange. Formatted in the worker from the ended OriginTrace:
//   date time kind vhost s-domain s-ip cs-method cs-uri cs-range sc-status sc-content-length x-ctx-id
// `kind` is the exchange's sc-sock-error (Connect-Timeout, Receive-Timeout, Server-Close,
// Non-Existent-Domain) for a failure, or one of document 3's warning kinds:
//   ClosedWithoutResponse          the origin closed before any answer
//   ClosedWhenDownloading          the origin closed (or stalled) in the middle of the body
//   NotPartialResponseOnRangeRequest   an origin request with Range got a 2xx other than 206
//   DifferentContentLengthOnRangeRequest  a 206 whose Content-Length is not its Content-Range span
//   PartialResponseOnNormalRequest an origin request without Range got 206
// A failure that is also a closed exchange is written once, under its sc-sock-error.
import { responseField, type OriginTrace } from '../../origin/index.js';
import { stamp } from './error-line.js';

const dash = (v: string | undefined): string => (v === undefined || v === '' ? '-' : v.replace(/\s/g, '+'));

/** The warning kinds of an exchange (none for a correct one). */
function warningOf(t: OriginTrace, range: string | undefined): string | undefined {
  if (t.sockError !== undefined && t.sockError !== 'Client-Close') return t.status === 0 ? 'ClosedWithoutResponse' : 'ClosedWhenDownloading';
  if (t.status === 0) return undefined;
  if (range === undefined) return t.status === 206 ? 'PartialResponseOnNormalRequest' : undefined;
  if (t.status === 206) {
    const m = /^bytes (\d+)-(\d+)\//.exec(responseField(t, 'content-range') ?? '');
    const length = responseField(t, 'content-length');
    if (m !== null && length !== undefined && Number(length) !== Number(m[2]) - Number(m[1]) + 1) return 'DifferentContentLengthOnRangeRequest';
    return undefined;
  }
  return t.status < 300 ? 'NotPartialResponseOnRangeRequest' : undefined;
}

/** The originError line of an ended exchange, or undefined when there is nothing to record. */
export function originErrorLine(t: OriginTrace, warning: boolean, now: number): string | undefined {
  const n = t.note;
  if (n === undefined) return undefined;
  const failed = t.sockError !== undefined && t.sockError !== 'Client-Close';
  const kind = failed ? t.sockError : warning ? warningOf(t, n.range) : undefined;
  if (kind === undefined) return undefined;
  const { date, time } = stamp(new Date(now));
  const colon = t.address.lastIndexOf(':');
  const ip = colon < 0 ? '' : t.address.slice(0, colon).replace(/^\[|\]$/g, '');
  return `${date} ${time} ${kind} ${n.vhost} ${dash(t.domain)} ${dash(ip)} ${n.method} ${dash(n.url)} ${dash(n.range)} ` +
    `${t.status} ${dash(responseField(t, 'content-length'))} ${n.ctxId}\n`;
}
