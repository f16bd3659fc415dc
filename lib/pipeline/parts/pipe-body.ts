// A body streamed from a source to a destination with what stream.pipeline() gave us, minus its
// cost: pipeline() gives every call its own AbortController and aborts it when the streams
// finish, and that abort() builds a DOMException with a stack trace - measured at a tenth of a
// worker's CPU on the proxy path. Here: pipe() for the data and back-pressure, errors from
// either side reported once, and the source destroyed when the destination goes away first (a
// client that disconnects must not keep the origin body flowing).
//
// `head`, when given, writes the answer's head: it runs at the source's first byte or its end, so
// a source that breaks before then leaves the destination untouched (not destroyed) for the
// caller to answer with an error status (an origin whose chunked body is broken from its first
// byte). node sends an HTTP/1 head with the first body write anyway.
import type { Readable, Writable } from 'node:stream';

export function pipeBody(src: Readable, dst: Writable, done: (err?: Error) => void, head?: () => void): void {
  let settled = false;
  const settle = (err?: Error): void => {
    if (settled) return;
    settled = true;
    done(err);
  };
  let started = head === undefined;
  // Listeners stay for the life of both streams: a late 'error' must never be unhandled.
  src.on('error', (err: Error) => { if (started) dst.destroy(); settle(err); });
  dst.on('error', (err: Error) => { src.destroy(); settle(err); });
  dst.once('finish', () => settle());
  dst.once('close', () => {
    if (dst.writableFinished) { settle(); return; }
    src.destroy();
    settle(Object.assign(new Error('destination closed before the body was complete'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
  });
  // A source that broke before anyone listened (an origin body that failed while an earlier step
  // awaited) will emit nothing more: without this the destination would wait for ever. Nothing
  // may read it then (a 'data' listener would still get what it had buffered).
  if (src.destroyed && !src.readableEnded) {
    if (started) dst.destroy();
    settle(src.errored ?? Object.assign(new Error('source destroyed before the body was complete'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    return;
  }
  if (!started) {
    // Before pipe()'s own listeners: the head is written before the first chunk or the end.
    const start = (): void => {
      if (started) return;
      started = true;
      head!();
    };
    if (src.readableEnded) start();
    else { src.once('data', start); src.once('end', start); }
  }
  src.pipe(dst);
}
