// The disk cache's directory in memory: which URLs the shared index may hold, so that a miss
// (a URL the index has no row of) is known without a SQLite query on the event loop. Traffic
// Server keeps its whole directory in memory for the same reason; this one is a Bloom filter
// (three bits per URL, about one URL in a hundred falsely "maybe"), in a SharedArrayBuffer that
// the writer thread fills (writer-directory.ts) and the request path only reads.
//
// What it promises is one-sided and only for the request path: `mayHave` false means "no row
// of this URL was committed before the last poll of the index" (rows of other processes reach
// the filter within one poll period, DIRECTORY_POLL_MS). A row the filter has not seen yet
// costs a miss that the index could have answered (the origin is asked, the answer replaces the
// row), never a wrong answer; a deleted row's bits stay until the next rebuild and only cost
// the index query they would have cost anyway. Purges, deletes and commands read the index
// itself, never this filter.

/** How often the writer thread reads the rows committed since its last look (any process). */
export const DIRECTORY_POLL_MS = 20;
/** Bits per expected URL: with three probes about 1% of absent URLs answer "maybe". */
const BITS_PER_URL = 24;
/** The smallest filter: 2^23 bits (1 MiB). */
const MIN_BITS = 1 << 23;

// The two hashes of the last `hash` call (module state: no array allocated per request).
let H = 0;
let G = 0;

/** FNV-1a of the host and URL (UTF-16 code units) into H, and a second hash into G (double hashing). */
function hash(vhost: string, url: string): void {
  let h = 0x811c9dc5;
  for (let i = 0; i < vhost.length; i++) h = Math.imul(h ^ vhost.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ 10, 0x01000193);
  for (let i = 0; i < url.length; i++) h = Math.imul(h ^ url.charCodeAt(i), 0x01000193);
  // murmur3's finaliser spreads the bits; the second hash is odd so the probes never coincide.
  let g = h ^ (h >>> 16);
  g = Math.imul(g, 0x85ebca6b);
  g ^= g >>> 13;
  g = Math.imul(g, 0xc2b2ae35);
  g ^= g >>> 16;
  H = h >>> 0;
  G = (g | 1) >>> 0;
}

export class UrlDirectory {
  /** Bit i of the filter is bit (i & 31) of words[i >>> 5]. */
  private readonly words: Int32Array;
  private readonly mask: number;

  /** `buffer`: a filter made by `UrlDirectory.create` in either thread. */
  constructor(readonly buffer: SharedArrayBuffer) {
    this.words = new Int32Array(buffer);
    this.mask = buffer.byteLength * 8 - 1;
  }

  /** A new empty filter sized for `urls` URLs (a power of two of bits, at least MIN_BITS). */
  static create(urls: number): UrlDirectory {
    let bits = MIN_BITS;
    // At most 2^31 bits, so that a bit index stays a non-negative int32.
    while (bits < urls * BITS_PER_URL && bits < 2 ** 31) bits *= 2;
    return new UrlDirectory(new SharedArrayBuffer(bits / 8));
  }

  /** How many URLs it holds before false "maybe"s grow past about 1%. */
  get capacity(): number {
    return Math.floor((this.mask + 1) / BITS_PER_URL);
  }

  add(vhost: string, url: string): void {
    hash(vhost, url);
    for (let i = 0; i < 3; i++) {
      const bit = (H + i * G) & this.mask;
      // Atomics: both threads add, and a plain read-modify-write could lose the other's bit.
      Atomics.or(this.words, bit >>> 5, 1 << (bit & 31));
    }
  }

  /** False only when no row of the URL was seen; true means "ask the index". */
  mayHave(vhost: string, url: string): boolean {
    hash(vhost, url);
    for (let i = 0; i < 3; i++) {
      const bit = (H + i * G) & this.mask;
      if ((this.words[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}
