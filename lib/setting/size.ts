// Sizes in setting.json are written with a unit (`100mb`, `512kb`, `0`); the server works in
// bytes. Units are binary (1kb = 1024 bytes) because they size memory and disk quotas.

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1024 ** 4,
};

const SIZE = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i;

/** Whether `s` is a size string that parseSize accepts. */
export function isSize(s: string): boolean {
  const m = SIZE.exec(s);
  return m !== null && UNITS[m[2]!.toLowerCase()] !== undefined;
}

/**
 * Bytes of a size string: a non-negative number with an optional unit b, kb, mb, gb, tb (or
 * k, m, g, t), case-insensitive. Fractions are allowed (`1.5gb`) and rounded down to a byte.
 * Throws a RangeError for anything else.
 */
export function parseSize(s: string): number {
  const m = SIZE.exec(s);
  const unit = m === null ? undefined : UNITS[m[2]!.toLowerCase()];
  if (m === null || unit === undefined) {
    throw new RangeError(`invalid size "${s}": expected a number with an optional unit b, kb, mb, gb or tb`);
  }
  return Math.floor(Number(m[1]) * unit);
}
