// Where error events go from any part of a process: `reportError` hands an event to the sink the
// process installed (the primary: its error log; an RT worker: its batch to the primary). With
// the error log off no sink is installed and an event costs one call.
import type { ErrorEvent } from './error-codes.js';

type ErrorSink = (e: ErrorEvent) => void;
let sink: ErrorSink | undefined;

export function setErrorSink(fn: ErrorSink | undefined): void {
  sink = fn;
}

export function reportError(e: ErrorEvent): void {
  sink?.(e);
}
