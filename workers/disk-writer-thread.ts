// Entry point of a disk store's writer thread (one per process, started by
// lib/cache/disk/writer-channel.ts): body files, index row commits, eviction and their file
// removals run here, off the event loop that serves requests.
import { parentPort, workerData } from 'node:worker_threads';
import { WriterCore } from '../lib/cache/disk/writer-core.js';
import type { OpsMessage, Reply, WriterInit } from '../lib/cache/disk/protocol.js';

const port = parentPort!;
const core = new WriterCore(workerData as WriterInit, (reply: Reply) => {
  port.postMessage(reply);
  // After the answer to CLOSE nothing else comes: let the thread end.
  if (reply.closed === true) port.close();
});
port.on('message', (m: OpsMessage) => core.receive(m));
