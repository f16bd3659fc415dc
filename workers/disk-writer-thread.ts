// Entry point of a disk store's writer thread (one per process, started by
// lib/cache/disk/writer-channel.ts): body files, index row commits, eviction and their file
// removals run here, off the event loop that serves requests.
import { parentPort, workerData } from 'node:worker_threads';
import { WriterCore } from '../lib/cache/disk/writer-core.js';
import { DirectoryFeed } from '../lib/cache/disk/writer-directory.js';
import type { OpsMessage, Reply, WriterInit } from '../lib/cache/disk/protocol.js';
import { udpLogSender } from '../lib/log/global/udp-line.js';

const port = parentPort!;
const init = workerData as WriterInit;
// The thread's disk errors go to the primary's log listener (the thread has no IPC channel of its
// own to the primary, and a hop through its worker would cost that worker's event loop).
const send = init.logPort === undefined ? undefined : udpLogSender(init.logPort);
const component = `disk-writer/${process.env.SVC_WORKER_INDEX ?? process.pid}`;
const report = send === undefined ? undefined : (code: '3001' | '3002', detail: string) => send({ log: 'error', component, code, detail });
let directory: DirectoryFeed | undefined;
const core = new WriterCore(init, (reply: Reply) => {
  port.postMessage(reply);
  // After the answer to CLOSE nothing else comes: let the thread end.
  if (reply.closed === true) { directory?.close(); port.close(); }
}, report);
// Without the directory every lookup asks the index: slower, never wrong.
try {
  directory = new DirectoryFeed(init.indexPath, init.busyTimeoutMs, (buffer) => port.postMessage({ directory: buffer } satisfies Reply));
  core.watchCommits(directory);
} catch (err) {
  report?.('3001', `${init.indexPath}: no directory, every lookup reads the index: ${(err as Error).message}`);
}
port.on('message', (m: OpsMessage) => core.receive(m));
