// Waiting on a condition the test can observe (what the origin saw, what a socket received),
// never on a fixed sleep: polls every few ms and gives up, with a message, after a bound.

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
