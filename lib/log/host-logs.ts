// The worker side of the per-host logs: what each host logs (built once per host setting, kept
// on its HostRuntime) and the two sinks that format lines where the data is: the access log from
// the finish stage's records, the origin log from each ended origin exchange, the dns log from
// each resolution of a domain origin. A host with no log on (and no global error/originError
// log) has `logs` undefined: the sinks then cost one property read per transaction.
//
// The worker's part of the global logs is here too: error events (reportError) and originError
// lines are formatted and filtered in the worker and batched to the primary like the others.
import type { ResolvedHost, Setting } from '../setting/types.js';
import type { RecordFields } from '../record/transaction.js';
import type { OriginNote, OriginTrace, ProbeRecord } from '../origin/index.js';
import type { DnsRecord } from '../origin/dns.js';
import { LineClock, type XffMode } from './access/fields.js';
import { svcLine, weblogALine, weblogBLine, type LineContext, type LineFormat } from './access/forms.js';
import { compileFormat, FormatError } from './access/custom-format.js';
import { svcBytes } from './access/svc-bytes.js';
import { refusedRecord, type RefusedRequest } from './access/refused.js';
import { originLine, probeLine } from './origin/line.js';
import type { LogShipper } from './ship.js';
import { ErrorLines } from './global/error-line.js';
import { reportError, setErrorSink } from './global/report.js';
import { originErrorLine } from './global/origin-error-line.js';
import { dnsLine } from './dns-line.js';

export interface HostLogs {
  /** `bytes`: the same line written in place into the batch (svc), else undefined. */
  access: { line: LineFormat; bytes: typeof svcBytes | undefined; xff: XffMode; loopback: boolean } | undefined;
  origin: { loopback: boolean } | undefined;
  dns: boolean;
}

/** The global error or originError log is on: every host's origin exchanges are watched. */
let failureLogs = false;

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
    access = { line: f.line, bytes: f.line === svcLine ? svcBytes : undefined, xff: log.access.xff, loopback: log.access.loopback };
  }
  const origin = log.origin.enable ? { loopback: log.origin.loopback } : undefined;
  const dns = log.dns.enable;
  return access === undefined && origin === undefined && !dns && !failureLogs ? undefined : { access, origin, dns };
}

function isLoopback(ip: string): boolean {
  return ip.startsWith('127.') || ip === '::1';
}

/** `logName`: whose logs the lines go to (a facade's, when it differs from the serving host). */
interface WithLogs { logs?: HostLogs | undefined; name: string; logName?: string }

/**
 * The origin log's view of the client transaction, taken when the exchange starts. `sent`: the
 * fields of the origin request, whose Range (cs-range, and what the originError warnings judge
 * the answer by) is not the client's: a miss is fetched whole, a Range miss by pieces.
 */
export function originNote(tx: RecordFields, method: string, bypass: boolean, sent: Record<string, string | string[]>): OriginNote | undefined {
  const host = tx.host as WithLogs | undefined;
  if (host === undefined || (host.logs?.origin === undefined && !failureLogs)) return undefined;
  return new ExchangeNote(tx, host.logName ?? host.name, method, sent.range, bypass ? (tx.bypass === 2 ? 'Bypass/instant' : 'Bypass') : '-');
}

/**
 * An origin exchange's note whose x-ctx-id is the transaction's, read only when a line prints it.
 * The transaction makes its id when first asked (TransactionRecord.ctxId), and most exchanges
 * print none: with only the error logs on, a line is written when the exchange fails; with the
 * origin log on, not for a loopback origin it leaves out. Taken when the note was made, the id
 * was a UUID per cache miss. The note holds the transaction until its exchange's lines are
 * written (HostLogWriter.origin, when the exchange ends), no longer than the fetch holds it.
 */
class ExchangeNote implements OriginNote {
  readonly url: string;
  readonly range: string | undefined;
  readonly acceptEncoding: string | undefined;
  readonly sessionId: number;
  readonly sessionType = 'cache';
  readonly balance = '-';
  chainError?: string | undefined;
  chainInfo?: string | undefined;
  private tx: RecordFields | undefined;
  private id: string | undefined = undefined;

  constructor(tx: RecordFields, readonly vhost: string, readonly method: string, range: string | string[] | undefined, readonly bypass: string) {
    this.tx = tx;
    this.url = tx.url;
    this.range = typeof range === 'string' ? range : undefined;
    this.acceptEncoding = tx.req.headers['accept-encoding'];
    this.sessionId = tx.sessionId;
  }

  get ctxId(): string {
    if (this.id === undefined && this.tx !== undefined) {
      this.id = this.tx.ctxId;
      this.tx = undefined;
    }
    return this.id ?? '-';
  }

  /** The exchange's lines are written: the transaction is let go (its id, if read, is kept). */
  written(): void {
    this.tx = undefined;
  }
}

export class HostLogWriter {
  private readonly clock = new LineClock();
  private readonly ctx: LineContext = { xff: 'all', clock: this.clock, now: 0 };
  private readonly hosts = new Map<string, WithLogs>();
  private originErrors: { warning: boolean } | undefined;

  constructor(private readonly shipper: LogShipper) {}

  /** env.log as it concerns a worker; called before the hosts of a setting are built. */
  configureGlobal(log: Setting['env']['log']): void {
    const lines = log.error.enable ? new ErrorLines(log.error) : undefined;
    this.originErrors = log.originError.enable ? { warning: log.originError.warning } : undefined;
    failureLogs = lines !== undefined || this.originErrors !== undefined;
    setErrorSink(lines === undefined ? undefined : (e) => {
      const line = lines.line(e, Date.now());
      if (line !== undefined) this.shipper.add('error', '-', line);
    });
  }

  /**
   * Records finished in this event-loop turn, written together at its end. A line written right
   * after its own request runs with cold caches; back to back they cost about a third as much
   * (measured on hit-1k: about 5 µs for a line written alone, 1.8 µs each in a run).
   */
  private readonly finished: RecordFields[] = [];

  /** finish's record sink: one access line per client transaction of a host that logs. */
  readonly record = (tx: RecordFields): void => {
    const a = (tx.host as WithLogs | undefined)?.logs?.access;
    // A sibling's hand-off is logged once, by the worker the client talked to.
    if (a === undefined || tx.fromSibling) return;
    if (!a.loopback && isLoopback(tx.clientAddress)) return;
    if (this.finished.push(tx) === 1) setImmediate(this.writeFinished);
  };

  /** Writes the lines of the records finished so far (the end of the turn, and a draining worker). */
  readonly writeFinished = (): void => {
    const list = this.finished;
    this.ctx.now = Date.now();
    for (let i = 0; i < list.length; i++) {
      try {
        this.access(list[i]!);
      } catch {
        // One record that cannot be written must not take the others' lines with it.
      }
    }
    list.length = 0;
  };

  private access(tx: RecordFields): void {
    const host = tx.host as WithLogs;
    const a = host.logs!.access!;
    const c = this.ctx;
    c.xff = a.xff;
    const name = host.logName ?? host.name;
    if (a.bytes !== undefined) {
      const batch = this.shipper.accessBatch(name);
      const end = a.bytes(tx, c, batch.buf, batch.used);
      if (end >= 0) {
        batch.used = end;
        this.shipper.wrote(name, batch);
        return;
      }
      // Longer than a batch's spare room: the string path ships the batch, then this line.
    }
    this.shipper.add('access', name, a.line(tx, c));
  }

  /**
   * A request the parser refused, in the access log of `host` (the host its Host field names on
   * that listener, else the listener's default host: see the worker), when that log is on.
   */
  refused(r: RefusedRequest, host: WithLogs | undefined): void {
    const a = host?.logs?.access;
    if (a === undefined || (!a.loopback && isLoopback(r.connection.clientAddress))) return;
    const tx = refusedRecord(r, host as RecordFields['host']);
    this.ctx.now = r.at;
    this.ctx.xff = a.xff;
    this.shipper.add('access', host!.logName ?? host!.name, a.line(tx, this.ctx));
  }

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
    if (o !== undefined && (o.loopback || !isLoopback(t.address.startsWith('[::1]') ? '::1' : t.address))) {
      this.shipper.add('origin', n.vhost, originLine(t, this.clock, Date.now()));
    }
    if (failureLogs) this.failure(t, n);
    if (n instanceof ExchangeNote) n.written();
  };

  /** The origin's side of the error log (2001-2003) and the originError log. */
  private failure(t: OriginTrace, n: OriginNote): void {
    const where = { vhost: n.vhost, url: n.url, ctxId: n.ctxId };
    if (t.sockError !== undefined && t.sockError !== 'Client-Close') {
      reportError({ code: t.sockError === 'Non-Existent-Domain' ? '2002' : '2001', ...where, detail: `${t.sockError} ${t.domain || '-'} ${t.address || '-'}` });
    } else if (t.status >= 500) {
      reportError({ code: '2003', ...where, detail: `status ${t.status} from ${t.domain} ${t.address}` });
    }
    const oe = this.originErrors;
    if (oe === undefined) return;
    const line = originErrorLine(t, oe.warning, Date.now());
    if (line !== undefined) this.shipper.add('originError', '-', line);
  }

  /** Each recovery probe of a host's Inactive origin address, for its origin log. */
  readonly probe = (vhost: string, p: ProbeRecord): void => {
    const o = this.hosts.get(vhost)?.logs?.origin;
    if (o !== undefined && (o.loopback || !isLoopback(p.ip))) this.shipper.add('origin', vhost, probeLine(p, this.clock));
  };

  /** Each resolution of a host's domain origin, for its dns log. */
  readonly dns = (vhost: string, r: DnsRecord): void => {
    if (this.hosts.get(vhost)?.logs?.dns === true) this.shipper.add('dns', vhost, dnsLine(r));
  };
}
