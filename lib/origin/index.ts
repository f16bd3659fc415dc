// The origin client of the request pipeline: one OriginSet per virtual host.
export { parseOriginAddress, originHostHeader, type OriginAddressParts } from './address.js';
export { OriginError, type OriginErrorCode, type SockError } from './errors.js';
export { type DnsRecord, resolveDomain, FALLBACK_TTL_S } from './dns.js';
export { type AddressState, type StateChange } from './health.js';
export { OriginSet } from './origin-set.js';
export type { OriginOptions, OriginRequest, OriginResponse, OriginStatus } from './types.js';
export type { BodyHandler, OriginBody, OriginHandler, OriginHead } from './types.js';
