// The RT worker process's entry: wires the worker (worker.ts) to the primary's IPC messages,
// RPC, statistics and log shipping, and says hello once it listens for messages.
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { SIBLING_SECRET_ENV, type PrimaryMessage, type WorkerMessage } from '../ipc/messages.js';
import { serveRpc } from '../ipc/rpc.js';
import { addRecordSink } from '../pipeline/finish.js';
import { SessionIds } from '../pipeline/parts/session-ids.js';
import { controlHandlers } from './control.js';
import { SharedSockets } from './listen-handle.js';
import { PrimaryLink } from './primary-link.js';
import { StatsReporter } from './stats-reporter.js';
import { RtWorker } from './worker.js';
import { systemLog } from '../log/system-log.js';
import { DirectFiles } from '../log/direct.js';
import { LogPipe } from '../log/pipe.js';

/** Entry of the worker process (workers/rt-worker.ts). */
export function runWorker(): void {
  // A miss's Transaction lives as long as its origin fetch, a hit's for microseconds. Having seen
  // the misses of a cache fill survive, V8's allocation-site pretenuring put every later hit's
  // Transaction in old space, where it held the request's whole object graph (IncomingMessage,
  // ServerResponse, header strings) past each scavenge until the next full GC: measured on
  // hit-mix, 3 MB promoted per scavenge and scavenges of 5-20 ms instead of under 1 ms. A worker
  // serves short-lived requests; what does live long is promoted the ordinary way.
  setFlagsFromString('--no-allocation-site-pretenuring');
  const index = Number(process.env.SVC_WORKER_INDEX ?? '0');
  const send = (m: WorkerMessage): void => { process.send?.(m); };
  const link = new PrimaryLink(send);
  // Asks the primary for its first block now: the answer arrives before the setting, so the
  // first request already has a node id.
  const sockets = new SharedSockets(send);
  const worker = new RtWorker(index, process.env[SIBLING_SECRET_ENV] ?? '', new SessionIds(() => send({ type: 'session-ids-request' })), link, sockets.listen);
  recordsForTests(index);
  const logPipe = new LogPipe();
  const logFiles = new DirectFiles(send);
  worker.attachLogs(logPipe.write, logFiles.write);
  const stats = new StatsReporter((m, done) => { if (process.connected) process.send!(m, undefined, {}, () => done?.()); else done?.(); }, worker.statsProbe());
  stats.start();
  const rpc = serveRpc({
    ...controlHandlers(worker.controlSource()),
    'drop-hosts': ({ names, diskToo }: { names: string[]; diskToo: boolean }) => worker.dropHosts(names, diskToo),
    'tls-status': () => worker.tlsStatus(),
  }, send);
  const wired: Wired = { worker, send, link, sockets, logPipe, logFiles, stats, rpc, applying: Promise.resolve(), ready: false };
  process.on('message', (m: PrimaryMessage, handle: unknown) => onMessage(wired, m, handle));
  send({ type: 'hello' });
  // The primary's SIGTERM reaches the whole process group; the worker waits for its 'drain'.
  process.on('SIGTERM', () => undefined);
  process.on('SIGINT', () => undefined);
  process.on('SIGHUP', () => undefined);
  // A signal sent to the whole group must not open the inspector (SIGUSR1) or kill (SIGUSR2).
  process.on('SIGUSR1', () => undefined);
  process.on('SIGUSR2', () => undefined);
}

/**
 * Tests only: every finished record as a JSON line in <dir>/records-<pid>.jsonl, so black-box
 * tests see what the records of a real cluster hold (session ids across workers, hand-offs).
 */
function recordsForTests(index: number): void {
  const recordDir = process.env.SVC_TEST_RECORD_DIR;
  if (recordDir === undefined || recordDir === '') return;
  const file = path.join(recordDir, `records-${process.pid}.jsonl`);
  addRecordSink((tx) => appendFileSync(file, `${JSON.stringify({ worker: index, ...tx.toJSON() })}\n`));
}

/** What the primary's messages act on. */
interface Wired {
  worker: RtWorker;
  send(m: WorkerMessage): void;
  link: PrimaryLink;
  sockets: SharedSockets;
  logPipe: LogPipe;
  logFiles: DirectFiles;
  stats: StatsReporter;
  rpc: ReturnType<typeof serveRpc>;
  /** Settings and run-time origin addresses apply one after the other; a drain waits for them. */
  applying: Promise<void>;
  /** A setting was applied once: a later failure leaves the worker serving the one before. */
  ready: boolean;
}

function onMessage(w: Wired, m: PrimaryMessage, handle: unknown): void {
  const { worker } = w;
  switch (m.type) {
    case 'listen-handle':
      w.sockets.onMessage(m, handle);
      break;
    case 'setting':
      applySetting(w, m);
      break;
    case 'origin-address':
      w.applying = w.applying.then(() => worker.setOriginAddresses(m.hosts)).catch((err: Error) => systemLog.error({ err: err.message }, 'run-time origin addresses not applied'));
      break;
    case 'log-files':
      w.logFiles.update(m.files, m.generation);
      break;
    case 'tls-ticket-keys':
      worker.setTicketKeys(Buffer.from(m.keys, 'base64'));
      break;
    case 'ring':
      worker.setRing(m.members);
      break;
    case 'session-ids':
      worker.sessionIds.addBlock(m.start, m.count);
      break;
    case 'rpc':
      w.rpc(m);
      break;
    case 'done':
      w.link.onMessage(m);
      break;
    case 'drain':
      // The last second's counts and the last log lines go to the primary before the exit, so
      // a drained worker's transactions are all in the node's statistics and logs.
      void w.applying.then(() => worker.drain(m.timeoutMs)).finally(() => void Promise.all([w.stats.flush(), w.logPipe.settled(), w.logFiles.settled()]).finally(() => process.exit(0)));
      break;
  }
}

/** Applies a setting after those before it and tells the primary how it went. */
function applySetting(w: Wired, m: Extract<PrimaryMessage, { type: 'setting' }>): void {
  w.applying = w.applying.then(() => w.worker.apply(m.setting, m.baseDir, m.changedHosts)).then(
    (failures) => {
      if (failures.length === 0) {
        w.ready = true;
        w.send({ type: 'ready', generation: m.generation });
        return;
      }
      w.send({ type: 'listen-error', generation: m.generation, errors: failures });
      if (!w.ready) setTimeout(() => process.exit(1), 50);
    },
    (err: Error) => {
      w.send({ type: 'apply-error', generation: m.generation, message: err.message });
      // A worker that never got going is no use half-built: exit, the primary starts another.
      if (!w.ready) setTimeout(() => process.exit(1), 50);
    },
  );
}
