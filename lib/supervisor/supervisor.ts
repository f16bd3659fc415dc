// `svc start`: a small long-lived process above the primary. It holds the listening sockets
// (ListenBroker) and starts the primary; a restart (`/command/service/restart`) starts a new
// primary beside the old one, which takes the same sockets, so every process of the node is
// replaced (the primary too: a changed `env`, or a new version after an install, becomes the
// running one) without a port ever closing. It forwards the signals an operator sends to the
// node (systemd's main pid is this process) and exits with the primary's exit code.
import { fork, type ChildProcess } from 'node:child_process';
import { setLogRole, systemLog } from '../log/system-log.js';
import { ENTRY_ENV, HANDOVER_ENV, NODE_STARTED_ENV, type FromSupervisor, type ToSupervisor } from '../ipc/supervisor-messages.js';
import { ListenBroker, type TcpHandle } from './listen-broker.js';
import { notifySystemd } from './sd-notify.js';

// This module is loaded by `svc start` only: its process is the supervisor.
setLogRole('supervisor');
const log = systemLog;
/** How long the new primary of a restart may take until its workers serve. */
const START_BOUND_MS = 120_000;

export class Supervisor {
  private readonly broker = new ListenBroker();
  /** The primary that serves (owns the management ports). */
  private current: ChildProcess | undefined;
  /** The primary of a restart, until it took over. */
  private next: ChildProcess | undefined;
  /** Old primaries draining after a hand-over. */
  private readonly retiring = new Set<ChildProcess>();
  private stopping = false;
  private startTimer: NodeJS.Timeout | undefined;
  private exitCode = 0;
  private readonly startedAt = Date.now();

  /**
   * `entry`: the svc.js to fork, as the operator named it: through the `current` link of an
   * install it names the newest version at every fork.
   */
  constructor(private readonly entry: string, private readonly settingPath: string) {}

  start(): void {
    for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => this.stop(sig));
    for (const sig of ['SIGHUP', 'SIGUSR1', 'SIGUSR2'] as const) process.on(sig, () => this.current?.kill(sig));
    this.current = this.spawn(false);
  }

  private spawn(handover: boolean): ChildProcess {
    const env = { ...process.env, [HANDOVER_ENV]: handover ? '1' : '', [ENTRY_ENV]: this.entry, [NODE_STARTED_ENV]: String(this.startedAt) };
    const child = fork(this.entry, ['run-primary', '--setting', this.settingPath], { env, stdio: 'inherit' });
    child.on('message', (m: ToSupervisor) => this.onMessage(child, m));
    child.once('exit', (code, signal) => this.onExit(child, code, signal));
    return child;
  }

  private send(to: ChildProcess | undefined, m: FromSupervisor, handle?: TcpHandle): void {
    if (to?.connected !== true) return;
    try {
      to.send(m, handle as never);
    } catch (err) {
      log.error({ err: (err as Error).message, type: m.type }, 'cannot reach a primary');
    }
  }

  private onMessage(from: ChildProcess, m: ToSupervisor): void {
    switch (m.type) {
      case 'listen':
        this.broker.acquire(m.owner, m.host, m.port).then(
          (h) => this.send(from, { type: 'listen-result', id: m.id }, h),
          (err: Error) => this.send(from, { type: 'listen-result', id: m.id, error: err.message }),
        );
        return;
      case 'unlisten':
        this.broker.release(m.owner, m.key);
        return;
      case 'unlisten-all':
        this.broker.releaseAll(m.prefix);
        return;
      case 'restart':
        if (from !== this.current) return;
        if (this.next !== undefined || this.stopping) {
          this.send(from, { type: 'restart-failed', reason: this.stopping ? 'the node is stopping' : 'a restart is already under way' });
          return;
        }
        log.info({ old: from.pid }, 'restart: starting a new primary');
        this.next = this.spawn(true);
        // A new primary that never serves is ended: its exit reports the failure to the old one.
        this.startTimer = setTimeout(() => {
          log.error({ primary: this.next?.pid }, `restart: the new primary did not serve within ${START_BOUND_MS / 1000} s; ending it`);
          this.next?.kill('SIGKILL');
        }, START_BOUND_MS);
        return;
      case 'stop':
        this.stopping = true;
        notifySystemd(['STOPPING=1', 'STATUS=draining (svc stop)']);
        return;
      case 'serving':
        if (from !== this.next) return;
        clearTimeout(this.startTimer);
        this.send(this.current, { type: 'handover' });
        return;
      case 'released':
        if (from !== this.current || this.next === undefined) return;
        this.retiring.add(from);
        this.current = this.next;
        this.next = undefined;
        this.send(this.current, { type: 'bind' });
        return;
      case 'started':
        log.info({ primary: from.pid }, 'primary started');
        // The node serves and its management API answers: systemd counts the unit started (or
        // restarted: a new primary after /command/service/restart says it again, harmlessly).
        notifySystemd(['--ready', `--status=serving; primary ${from.pid}`]);
        return;
      case 'start-failed':
        if (from === this.next) this.send(this.current, { type: 'restart-failed', reason: m.reason });
        return;
    }
  }

  private onExit(child: ChildProcess, code: number | null, signal: string | null): void {
    // The sockets its workers held: those workers are gone with it (cluster workers leave when
    // their primary's channel closes).
    this.broker.releaseAll(`${child.pid}/`);
    this.retiring.delete(child);
    if (child === this.next) {
      clearTimeout(this.startTimer);
      this.next = undefined;
      this.send(this.current, { type: 'restart-failed', reason: `the new primary exited during its start (${signal ?? code})` });
      return;
    }
    if (child !== this.current) return;
    this.current = undefined;
    // A primary that dies on its own (not stopped) ends the node with its code: the service
    // manager (systemd Restart=on-failure) starts it again from a clean state.
    this.exitCode = this.stopping ? (code ?? 0) : (code === 0 || code === null ? 1 : code);
    if (!this.stopping) log.error({ code, signal }, 'primary exited; the node stops');
    this.finish();
  }

  private stop(sig: NodeJS.Signals): void {
    this.stopping = true;
    notifySystemd(['STOPPING=1', 'STATUS=draining']);
    for (const c of [this.current, this.next, ...this.retiring]) c?.kill(sig);
  }

  /** Exits once every primary is gone. */
  private finish(): void {
    if (this.next !== undefined) this.next.kill('SIGTERM');
    const left = [this.next, ...this.retiring].filter((c): c is ChildProcess => c !== undefined && c.exitCode === null && c.signalCode === null);
    if (left.length === 0) process.exit(this.exitCode);
    for (const c of left) c.once('exit', () => this.finish());
  }
}
