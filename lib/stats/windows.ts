// Sliding sums over the last N seconds of rows of counters, kept incrementally: a ring of slots
// and a running sum (add into the current slot and the sum; moving on subtracts the slot that
// falls out). Reading a window is a copy of its sum, never a loop over the seconds.
//
// The 1-minute window has 60 one-second slots (exact). The 5-minute window has 30 ten-second
// slots, so it covers the last 290 to 300 seconds (it slides in 10-second steps): a third of the
// memory of 300 slots per host, for a figure nobody reads to the second.

export class SlidingWindow {
  private readonly ring: Float64Array;
  readonly sum: Float64Array;
  private slot = 0;
  private ticks = 0;

  /** `slots` slots of `slotSeconds` seconds each, rows of `stride` numbers. */
  constructor(readonly stride: number, readonly slots: number, readonly slotSeconds: number) {
    this.ring = new Float64Array(stride * slots);
    this.sum = new Float64Array(stride);
  }

  /** The span in seconds (what an average divides by). */
  get seconds(): number {
    return this.slots * this.slotSeconds;
  }

  /** One closed second of values. */
  add(second: Float64Array): void {
    const at = this.slot * this.stride;
    for (let i = 0; i < this.stride; i++) {
      const v = second[i]!;
      if (v === 0) continue;
      this.ring[at + i] += v;
      this.sum[i] += v;
    }
  }

  /** A second went by: every `slotSeconds`, the oldest slot leaves the window and is reused. */
  tick(): void {
    if (++this.ticks < this.slotSeconds) return;
    this.ticks = 0;
    this.slot = (this.slot + 1) % this.slots;
    const at = this.slot * this.stride;
    for (let i = 0; i < this.stride; i++) {
      const v = this.ring[at + i]!;
      if (v === 0) continue;
      this.sum[i] -= v;
      this.ring[at + i] = 0;
    }
  }
}
