/**
 * Marks a request handed over by a sibling worker: `<index>:<secret>`, the secret being the one
 * the primary made for this start. Trusted only on the internal port, and only with the secret.
 */
export const SIBLING_HEADER = 'x-svc-sibling';
