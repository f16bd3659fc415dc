// The client connections of this worker for System.ServerSocket (document 1): each TCP
// connection a service port accepted is counted once, whichever server ends up serving it (a TLS
// port wraps it in a TLSSocket, h2c hands it to the HTTP/2 side), into row 0 of the counters
// (clientAccepted, clientClosed: a connection has no host) and into the open total. Per
// connection, never per request.
import type { Socket } from 'node:net';
import { workerCounters } from '../pipeline/parts/counters.js';
import { fieldIndex } from '../record/counter-layout.js';

const COUNTED = Symbol('svc.clientSocketCounted');
type Marked = Socket & { [COUNTED]?: true };

const ACCEPTED = fieldIndex('clientAccepted');
const CLOSED = fieldIndex('clientClosed');
let open = 0;

function closed(): void {
  open--;
  workerCounters.values[CLOSED]++;
}

/** A connection a service port accepted (again for the same socket: nothing). */
export function countClientSocket(socket: Socket): void {
  const s = socket as Marked;
  if (s[COUNTED] === true) return;
  s[COUNTED] = true;
  open++;
  workerCounters.values[ACCEPTED]++;
  socket.once('close', closed);
}

/** A socket over a connection counted already (the TLSSocket of an accepted one). */
export function markCounted(socket: Socket): void {
  (socket as Marked)[COUNTED] = true;
}

/** Client connections open now (accepted, not yet closed; TLS handshakes included). */
export function openClientSockets(): number {
  return open;
}
