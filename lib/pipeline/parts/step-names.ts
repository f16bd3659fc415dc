// The names of the request's steps and what a step returns, in a leaf: the transaction's
// RuntimeState (transaction.ts) names them, and every step returns them (steps.ts runs them).
// Re-exported by runtime-state.ts, where the steps read them.

/** The steps of the table (steps.ts `STEPS`), every one run by the driver. */
export type DrivenStep = 'receive' | 'rewrite' | 'access' | 'pagedesk' | 'modify' | 'bypass' | 'hook' | 'lookup' | 'fetch' | 'deliver' | 'finish';

/** A step's return when nothing more runs for the transaction before finish: answered, handed on, passed through. */
export const DONE = 'done';
/**
 * A step's return when it waits (the hook's call, a disk read, a POST body, an origin fetch):
 * what it waits on enters the driver again (RuntimeState.resume) at the step that runs next, or
 * answers the transaction itself (a fetch streaming its new answer to every client waiting).
 */
export const SUSPENDED = 'suspended';
/** What a step returns: the step that runs next, DONE, or SUSPENDED. */
export type Next = DrivenStep | typeof DONE | typeof SUSPENDED;
