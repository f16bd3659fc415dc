/**
 * Marks a request handed over by a sibling worker: `<index>:<secret>`, the secret being the one
 * the primary made for this start. Trusted only on the internal port, and only with the secret.
 */
export const SIBLING_HEADER = 'x-svc-sibling';

/**
 * The `x-ctx-id` of the request chain, from the worker that received the client to the owner
 * (so both records name one chain); trusted only on the internal port, never sent to an origin.
 */
export const CTX_HEADER = 'x-svc-ctx-id';

/**
 * A hooked request's redefinition, for the owner worker (hook-hand-off.ts); trusted only on the
 * internal port, never sent to an origin.
 */
export const HOOKED_HEADER = 'x-svc-hooked';
