// The origin client of the request pipeline: one OriginSet per virtual host.
export { parseOriginAddress, originHostHeader } from './address.js';
export { MAX_STATUS, OriginError, statusError } from './errors.js';
export { type DnsRecord } from './dns.js';
export { type ProbeRecord, type StateChange } from './health.js';
export { OriginSet } from './origin-set.js';
export { OriginTrace, type OriginNote, onTraceDone, responseField, traceAnswered, traceFailed } from './trace.js';
export type { OriginOptions, OriginResponse, OriginStatus } from './types.js';
export type { OriginBody, OriginHandler, OriginHead, OriginRequest } from './types.js';
