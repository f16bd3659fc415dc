// HTTP caching rules of a shared cache (RFC 9111, 9110, 5861, 9213) as small pure functions.
export * from './options.js';
export * from './headers.js';
export * from './status.js';
export * from './cache-control.js';
export * from './cdn-cache-control.js';
export * from './storable.js';
export * from './freshness.js';
export * from './vary.js';
export * from './etag.js';
export * from './conditional.js';
export * from './range.js';
export * from './invalidation.js';
export * from './results.js';
export * from './encoding.js';
export * from './post-reuse.js';
export * from './not-modified.js';
