// The worker side of the per-host logs: what each host logs (built once per host setting, kept
// on its HostRuntime) and the two sinks that format lines where the data is: the access log from
// the finish stage's records, the origin log from each ended origin exchange. A host with no log
// on has `logs` undefined: the sinks then cost one property read per transaction.
import type { ResolvedHost } from '../setting/types.js';
import type { TransactionRecord } from '../pipeline/transaction.js';
import type { OriginNote, OriginTrace } from '../origin/index.js';
import { LineClock, type XffMode } from './access/fields.js';
import { svcLine, weblogALine, weblogBLine, type LineContext, type LineFormat } from './access/forms.js';
import { compileFormat, FormatError } from './access/custom-format.js';
import { originLine } from './origin/line.js';
import type { LogShipper } from './ship.js';

export interface HostLogs {
  access: { line: LineFormat; xff: XffMode; loopback: boolean } | undefined;
  origin: { loopback: boolean } | undefined;
}

/** The form a host's access log is written in: an invalid custom format falls back to svc. */
export function accessFormOf(h: ResolvedHost): { form: string; line: LineFormat; error?: string } {
  const a = h.functions.operations.log.access;
  switch (a.form) {
    case 'weblogA': return { form: 'weblogA', line: weblogALine };
    case 'weblogB': return { form: 'weblogB', line: weblogBLine };
    case 'custom':
      try {
        if (a.format === null || a.format === '') throw new FormatError('no format given');
        return { form: 'custom', line: compileFormat(a.format) };
      } catch (err) {
        return { form: 'svc', line: svcLine, error: (err as Error).message };
      }
    default: return { form: 'svc', line: svcLine };
  }
}

/** What a host logs; `warn` hears once about a custom format that fell back to svc. */
export function hostLogsOf(h: ResolvedHost, warn: (message: string) => void): HostLogs | undefined {
  const log = h.functions.operations.log;
  let access: HostLogs['access'];
  if (log.access.enable) {
    const f = accessFormOf(h);
    if (f.error !== undefined) warn(`host ${h.name}: functions.operations.log.access.format is invalid (${f.error}); the access log is written in the svc form`);
    access = { line: f.line, xff: log.access.xff, loopback: log.access.loopback };
  }
  const origin = log.origin.enable ? { loopback: log.origin.loopback } : undefined;
  return access === undefined && origin === undefined ? undefined : { access, origin };
}

function isLoopback(ip: string): boolean {
  return ip.startsWith('127.') || ip === '::1';
}

/** `logName`: whose logs the lines go to (a facade's, when it differs from the serving host). */
interface WithLogs { logs?: HostLogs | undefined; name: string; logName?: string }

/** The origin log's view of the client transaction, taken when the exchange starts. */
export function originNote(tx: TransactionRecord, method: string, bypass: boolean): OriginNote | undefined {
  const host = tx.host as WithLogs | undefined;
  if (host?.logs?.origin === undefined) return undefined;
  const h = tx.req.headers;
  return {
    vhost: host.logName ?? host.name, method, url: tx.url, range: h.range, acceptEncoding: h['accept-encoding'], sessionId: tx.sessionId,
    ctxId: tx.ctxId, bypass: bypass ? (tx.bypass === 2 ? 'Bypass/instant' : 'Bypass') : '-', sessionType: 'cache', balance: '-',
  };
}

export class HostLogWriter {
  private readonly clock = new LineClock();
  private readonly ctx: LineContext = { xff: 'all', clock: this.clock, now: 0 };
  private readonly hosts = new Map<string, WithLogs>();

  constructor(private readonly shipper: LogShipper) {}

  /** finish's record sink: one access line per client transaction of a host that logs. */
  readonly record = (tx: TransactionRecord): void => {
    const a = (tx.host as WithLogs | undefined)?.logs?.access;
    // A sibling's hand-off is logged once, by the worker the client talked to.
    if (a === undefined || tx.fromSibling) return;
    if (!a.loopback && isLoopback(tx.clientAddress)) return;
    const c = this.ctx;
    c.xff = a.xff;
    c.now = Date.now();
    const host = tx.host as WithLogs;
    this.shipper.add('access', host.logName ?? host.name, a.line(tx, c));
  };

  /** Hosts by name for the origin sink (an exchange can end after its transaction). */
  setHosts(hosts: Iterable<WithLogs>): void {
    this.hosts.clear();
    for (const h of hosts) this.hosts.set(h.name, h);
  }

  /** One origin line per ended exchange whose host has the origin log on. */
  readonly origin = (t: OriginTrace): void => {
    const n = t.note;
    if (n === undefined) return;
    const o = this.hosts.get(n.vhost)?.logs?.origin;
    if (o === undefined) return;
    if (!o.loopback && isLoopback(t.address.startsWith('[::1]') ? '::1' : t.address)) return;
    this.shipper.add('origin', n.vhost, originLine(t, this.clock, Date.now()));
  };
}
