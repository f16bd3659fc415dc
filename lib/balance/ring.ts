// Consistent-hash ring of the live RT workers (balance.mode `hash`). Each worker owns many points
// on a 32-bit circle, so when one joins or leaves only about 1/N of the URLs change owner.

const POINTS_PER_WORKER = 160;

/** FNV-1a, 32 bit: fast for short keys and well spread for URLs. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // A final avalanche so that keys differing only in their last bytes spread over the circle.
  h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b); h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35); h ^= h >>> 16;
  return h >>> 0;
}

export class HashRing {
  private points = new Uint32Array(0);
  private owners = new Int32Array(0);
  private members: number[] = [];

  constructor(members: readonly number[] = []) {
    this.set(members);
  }

  /** Worker indices currently on the ring. */
  get workers(): readonly number[] {
    return this.members;
  }

  set(members: readonly number[]): void {
    this.members = [...new Set(members)].sort((a, b) => a - b);
    const pairs: [number, number][] = [];
    for (const m of this.members) {
      for (let v = 0; v < POINTS_PER_WORKER; v++) pairs.push([fnv1a(`worker-${m}#${v}`), m]);
    }
    pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    this.points = Uint32Array.from(pairs, (p) => p[0]);
    this.owners = Int32Array.from(pairs, (p) => p[1]);
  }

  /** Owner worker index of a hash value, -1 when the ring is empty. */
  ownerOfHash(hash: number): number {
    const n = this.points.length;
    if (n === 0) return -1;
    let lo = 0, hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.points[mid]! < hash) lo = mid + 1; else hi = mid;
    }
    return this.owners[lo === n ? 0 : lo]!;
  }

  owner(key: string): number {
    return this.ownerOfHash(fnv1a(key));
  }
}
