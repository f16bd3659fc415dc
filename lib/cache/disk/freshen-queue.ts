// The 304s of the request path on their way to the index (DiskStore.freshen). Each waits here,
// one per object (a later 304 of the same object replaces it), and all go to the writer thread
// together about a second after the first: an object revalidated on every request is written
// once a second, not once per request, and the request path posts nothing per 304. The memory
// tier has the 304 at once; the index has it that much later, or not at all after a crash, which
// only leaves a staler copy (writer-freshen.ts says what a late 304 never undoes).
import type { CacheKey, NotModified } from '../store.js';
import { sameFields } from '../policy/headers.js';
import type { FreshenItem, MetaOp } from './protocol.js';

/** How long a 304 may wait before the index has it. */
const FRESHEN_DELAY_MS = 1000;

export class FreshenQueue {
  /**
   * vhost -> url -> the waiting item of the URL's variant, or a list when several of its variants
   * wait (rare): the usual URL costs no list of its own, nor reading one on every 304.
   */
  private items = new Map<string, Map<string, FreshenItem | FreshenItem[]>>();
  private count = 0;
  private timer: NodeJS.Timeout | undefined;
  /** A write at the end of this turn is scheduled. */
  private soon = false;
  /** Settles once the last items handed to the writer thread are committed (or lost with it). */
  private written: Promise<void> = Promise.resolve();

  /** `send`: the writer channel's META op; `now`: the store's clock (the rows' updated_at). */
  constructor(private readonly send: (op: MetaOp) => Promise<number>, private readonly now: () => number) {}

  /** `soon`: written at the end of this event-loop turn (the index is the only copy of it). */
  add(key: CacheKey, variantKey: string, nm: NotModified, soon: boolean): void {
    let urls = this.items.get(key.vhost);
    if (urls === undefined) this.items.set(key.vhost, (urls = new Map()));
    const held = urls.get(key.url);
    const item = held === undefined ? undefined : Array.isArray(held) ? held.find((it) => it.variant === variantKey)
      : held.variant === variantKey ? held : undefined;
    if (item === undefined) {
      const added: FreshenItem = { vhost: key.vhost, url: key.url, variant: variantKey, headers: nm.headers, requestTime: nm.requestTime, receivedAt: nm.receivedAt, policy: nm.policy };
      if (held === undefined) urls.set(key.url, added);
      else if (Array.isArray(held)) held.push(added);
      else urls.set(key.url, [held, added]);
      this.count++;
    } else {
      // A later 304 of the same object: what it says replaces what the earlier one said. Fields
      // that say the same (the 304s of one second, mostly) keep the earlier object: each new one
      // kept here would outlive two young-generation collections and be copied to the old one.
      if (!sameFields(item.headers, nm.headers)) item.headers = nm.headers;
      item.requestTime = nm.requestTime;
      item.receivedAt = nm.receivedAt;
      item.policy = nm.policy;
    }
    if (soon && !this.soon) {
      this.soon = true;
      setImmediate(() => { this.soon = false; void this.write(); });
    }
    this.timer ??= setTimeout(() => { void this.write(); }, FRESHEN_DELAY_MS).unref();
  }

  /** Hands every waiting item to the writer now; settles once they are committed. */
  write(): Promise<void> {
    if (this.timer !== undefined) { clearTimeout(this.timer); this.timer = undefined; }
    if (this.count > 0) {
      const items: FreshenItem[] = [];
      for (const urls of this.items.values()) {
        for (const held of urls.values()) if (Array.isArray(held)) items.push(...held); else items.push(held);
      }
      this.items = new Map();
      this.count = 0;
      // A failed write leaves the rows as they were: staler copies, never wrong ones.
      this.written = this.send({ t: 'freshen', items, now: this.now() }).then(() => undefined, () => undefined);
    }
    return this.written;
  }
}
