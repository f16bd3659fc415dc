/** Marks a request handed over by a sibling worker; trusted only on the internal port. */
export const SIBLING_HEADER = 'x-svc-sibling';
