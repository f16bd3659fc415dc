// Waiting on a condition the test can observe (what the origin saw, a file, a log line, an API
// answer), never on a fixed sleep: each helper polls and gives up after a bound.

export async function until(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`not seen within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Resolves with the promise's value, or rejects when it takes longer than the bound. */
export function within<T>(p: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_ok, fail) => {
    timer = setTimeout(() => fail(new Error(`not done within ${timeoutMs} ms: ${what}`)), timeoutMs);
  });
  return Promise.race([p, bound]).finally(() => clearTimeout(timer));
}


export interface WaitOptions {
  /** Give up after about this long (default 10 s: only a failing test waits that long). */
  timeoutMs?: number;
  /** Pause between two polls (default 20 ms). */
  intervalMs?: number;
}

/** Polls `cond` until it holds; false when it still does not after `timeoutMs`. */
export async function waitFor(cond: () => boolean | Promise<boolean>, opts: WaitOptions = {}): Promise<boolean> {
  const intervalMs = opts.intervalMs ?? 20;
  const polls = Math.max(1, Math.ceil((opts.timeoutMs ?? 10_000) / intervalMs));
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
