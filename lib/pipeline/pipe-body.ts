// A body streamed from a source to a destination with what stream.pipeline() gave us, minus its
// cost: pipeline() gives every call its own AbortController and aborts it when the streams
// finish, and that abort() builds a DOMException with a stack trace - measured at a tenth of a
// worker's CPU on the proxy path. Here: pipe() for the data and back-pressure, errors from
// either side reported once, and the source destroyed when the destination goes away first (a
// client that disconnects must not keep the origin body flowing).
import type { Readable, Writable } from 'node:stream';

export function pipeBody(src: Readable, dst: Writable, done: (err?: Error) => void): void {
  let settled = false;
  const settle = (err?: Error): void => {
    if (settled) return;
    settled = true;
    done(err);
  };
  // Listeners stay for the life of both streams: a late 'error' must never be unhandled.
  src.on('error', (err: Error) => { dst.destroy(); settle(err); });
  dst.on('error', (err: Error) => { src.destroy(); settle(err); });
  dst.once('finish', () => settle());
  dst.once('close', () => {
    if (dst.writableFinished) { settle(); return; }
    src.destroy();
    settle(Object.assign(new Error('destination closed before the body was complete'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
  });
  // A source that broke before anyone listened (an origin body that failed while an earlier step
  // awaited) will emit nothing more: without this the destination would wait for ever.
  if (src.destroyed && !src.readableEnded) {
    dst.destroy();
    settle(src.errored ?? Object.assign(new Error('source destroyed before the body was complete'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    return;
  }
  src.pipe(dst);
}
