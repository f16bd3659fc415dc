// Where the cache stages read the time (epoch ms): a stored copy's age, whether it is fresh, the
// times of what they store. Injected (RtWorker, CacheStage) so that a test sets the time a
// freshness decision sees instead of waiting for it to pass; the worker's is the real clock.
export interface Clock { now(): number }

export const realClock: Clock = Object.freeze({ now: Date.now });
