// Tests wait for what they need to see, not for a guessed time: `waitFor` polls a condition (a
// file, a log line, a counter, an API answer) a bounded number of times and says whether it held.

export interface WaitOptions {
  /** Give up after about this long (default 5000 ms). */
  timeoutMs?: number;
  /** Pause between two polls (default 20 ms). */
  intervalMs?: number;
}

/** Polls `cond` until it holds; false when it still does not after `timeoutMs`. */
export async function waitFor(cond: () => boolean | Promise<boolean>, opts: WaitOptions = {}): Promise<boolean> {
  const intervalMs = opts.intervalMs ?? 20;
  const polls = Math.max(1, Math.ceil((opts.timeoutMs ?? 5000) / intervalMs));
  for (let i = 0; i < polls; i++) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  return cond();
}

/** Polls `probe` until its value satisfies `ok`; the last value either way. */
export async function pollUntil<T>(probe: () => Promise<T>, ok: (v: T) => boolean, opts: WaitOptions = {}): Promise<T> {
  let last!: T;
  await waitFor(async () => ok(last = await probe()), opts);
  return last;
}
