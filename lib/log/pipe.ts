// The byte channel of the log batches (lib/log/ship.ts) from each worker to the primary: one
// extra pipe the primary opens at fork (file descriptor LOG_FD of the worker). Batches are raw
// frames, so neither side serializes them, and the IPC channel stays free for control messages.
import net from 'node:net';
import type { Readable } from 'node:stream';
import { FrameReader, type LogBatch } from './ship.js';

const LOG_FD = 4;

/** The worker's `stdio` at fork: the usual three, the IPC channel, then the log pipe. */
export const WORKER_STDIO: Array<'inherit' | 'ipc' | 'pipe'> = ['inherit', 'inherit', 'inherit', 'ipc', 'pipe'];

/** Primary: every batch a worker writes on its log pipe goes to `deliver`, in order. */
export function readLogPipe(stdio: ReadonlyArray<unknown>, deliver: (b: LogBatch) => void): void {
  const pipe = stdio[LOG_FD] as Readable | null | undefined;
  if (pipe === null || pipe === undefined) return;
  const reader = new FrameReader(deliver);
  pipe.on('data', (chunk: Buffer) => reader.push(chunk));
  // A worker that dies mid-frame leaves a broken tail: nothing to do but drop it.
  pipe.on('error', () => undefined);
}

/** Worker: writes frames to the primary; `settled` resolves once every frame left the process. */
export class LogPipe {
  private readonly socket = new net.Socket({ fd: LOG_FD, readable: false, writable: true });
  private inFlight = 0;
  private idle: (() => void) | undefined;

  constructor() {
    this.socket.unref();
    // The primary is gone: the worker is being torn down and its lines cannot go anywhere.
    this.socket.on('error', () => undefined);
  }

  readonly write = (frame: Buffer): void => {
    this.inFlight++;
    this.socket.write(frame, this.written);
  };

  settled(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => { this.idle = resolve; });
  }

  private readonly written = (): void => {
    if (--this.inFlight === 0 && this.idle !== undefined) {
      const idle = this.idle;
      this.idle = undefined;
      idle();
    }
  };
}
